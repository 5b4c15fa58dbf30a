import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { FlagsList } = await import('./FlagsList');
const { json, renderWithProviders, router } = await import('../../test/harness');
const { flag } = await import('../../test/fixtures');

const page = (items: unknown[]) => ({ items, total: items.length, skip: 0, limit: 500 });
const one = flag({ id: '55555555-5555-4555-8555-000000000001', key: 'live', name: 'Live flag', status: 'active', is_active: true });
const archived = flag({ id: '55555555-5555-4555-8555-000000000002', key: 'old', name: 'Old flag', status: 'archived' });

beforeEach(() => {
  fetchMock.mockReset();
  window.localStorage.clear();
});

describe('<FlagsList>', () => {
  it('says "1 flag", hides archived flags by default and shows them on request', async () => {
    fetchMock.mockImplementation(router([['GET', /\/feature-flags\/$/, () => json(200, page([one, archived]))]]));
    const user = userEvent.setup();
    renderWithProviders(<FlagsList />);
    await screen.findByRole('link', { name: 'Live flag' });
    expect(screen.queryByRole('link', { name: 'Old flag' })).toBeNull();
    expect(screen.getByText('1 flag (1 archived flag hidden)', { selector: '.list-count' })).toBeTruthy();
    expect(document.body.textContent).not.toMatch(/\b1 flags\b/);
    await user.click(screen.getByLabelText('Show archived'));
    await screen.findByRole('link', { name: 'Old flag' });
    expect(screen.getByText('2 flags', { selector: '.list-count' })).toBeTruthy();
  });

  it('says the API cannot be reached instead of "Failed to fetch", and Retry reads again', async () => {
    let up = false;
    fetchMock.mockImplementation(async (request) => {
      if (!up) throw new TypeError('Failed to fetch');
      return router([['GET', /\/feature-flags\/$/, () => json(200, page([one]))]])(request);
    });
    const user = userEvent.setup();
    renderWithProviders(<FlagsList />);
    const alert = await screen.findByText(/The API cannot be reached/);
    expect(alert.closest('[role="alert"]')?.textContent).not.toContain('Failed to fetch');
    up = true;
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    await screen.findByRole('link', { name: 'Live flag' });
    expect(screen.queryByText(/cannot be reached/)).toBeNull();
  });
});
