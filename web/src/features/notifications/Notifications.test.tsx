import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { Notifications } = await import('./Notifications');
const { json, renderWithProviders, router, signedInAs } = await import('../../test/harness');

const prefs = (patch: Record<string, unknown> = {}) => ({
  user_id: '00000000-0000-4000-8000-000000000001',
  email_enabled: false,
  email_address: null,
  chat_webhook_enabled: false,
  chat_webhook_url: null,
  events: [],
  updated_at: null,
  email_configured: true,
  ...patch,
});

beforeEach(() => {
  fetchMock.mockReset();
  window.localStorage.clear();
});

describe('<Notifications>', () => {
  it('says mail is not configured on this server and does not let email be switched on', async () => {
    const me = signedInAs('DEVELOPER');
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, me)],
        ['GET', /\/notifications\/preferences$/, () => json(200, prefs({ email_configured: false }))],
      ]),
    );
    renderWithProviders(<Notifications />);
    const warning = await screen.findByText(/Email is not configured on this server/);
    const box = screen.getByLabelText('Send email') as HTMLInputElement;
    expect(box.disabled).toBe(true);
    expect(box.getAttribute('aria-describedby')).toBe(warning.id);
  });

  it('confirms "Save settings" with a toast', async () => {
    const me = signedInAs('DEVELOPER');
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, me)],
        ['GET', /\/notifications\/preferences$/, () => json(200, prefs())],
        ['PUT', /\/notifications\/preferences$/, () => json(200, prefs({ email_enabled: true, updated_at: '2026-11-02T10:00:00.000Z' }))],
      ]),
    );
    const user = userEvent.setup();
    renderWithProviders(<Notifications />);
    const box = (await screen.findByLabelText('Send email')) as HTMLInputElement;
    expect(box.disabled).toBe(false);
    expect(screen.queryByText(/Email is not configured/)).toBeNull();
    await user.click(box);
    await user.click(screen.getByRole('button', { name: 'Save settings' }));
    expect(await screen.findByText('Notification settings saved.')).toBeTruthy();
  });
});
