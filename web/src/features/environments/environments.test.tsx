import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { Environments } = await import('./Environments');
const { FlagsList } = await import('../feature-flags/FlagsList');
const { json, renderWithProviders, router, signedInAs } = await import('../../test/harness');
const { flag } = await import('../../test/fixtures');

const production = { key: 'production', name: 'Production', description: null, color: '#16a34a', sort_order: 0, is_default: true, created_at: '2026-01-01T00:00:00Z' };
const staging = { key: 'staging', name: 'Staging', description: 'Pre-release', color: null, sort_order: 10, is_default: false, created_at: '2026-01-02T00:00:00Z' };
const state = (is_active: boolean) => ({ is_active, status: is_active ? 'active' : 'inactive', rollout_percentage: 100, targeting_rules: null, updated_at: '2026-01-03T00:00:00Z' });
const requests = (method: string, path: RegExp) =>
  fetchMock.mock.calls.map(([r]) => r).filter((r): r is Request => r instanceof Request && r.method === method && path.test(new URL(r.url).pathname));

beforeEach(() => {
  fetchMock.mockReset();
  window.localStorage.clear();
});

describe('<FlagsList> with several environments', () => {
  it('shows one switch per environment and turns the flag on in that environment only', async () => {
    const live = flag({ name: 'Live flag', is_active: false, status: 'inactive', environments: { production: state(false), staging: state(false) } } as never);
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, signedInAs('DEVELOPER'))],
        ['GET', /\/environments$/, () => json(200, [production, staging])],
        ['GET', /\/feature-flags\/$/, () => json(200, { items: [live], total: 1, skip: 0, limit: 500 })],
        ['POST', /\/activate$/, () => json(200, { ...live, is_active: true, status: 'active' })],
      ]),
    );
    signedInAs('DEVELOPER');
    const user = userEvent.setup();
    renderWithProviders(<FlagsList />);
    const stagingSwitch = await screen.findByRole('switch', { name: 'Live flag is off in Staging' });
    expect(screen.getByRole('switch', { name: 'Live flag is off in Production' })).toBeTruthy();
    expect(screen.getByRole('columnheader', { name: 'Staging' })).toBeTruthy();
    await user.click(stagingSwitch);
    await vi.waitFor(() => expect(requests('POST', /\/activate$/)).toHaveLength(1));
    expect(new URL(requests('POST', /\/activate$/)[0].url).searchParams.get('environment')).toBe('staging');
  });

  it('reads the flags in the environment chosen in the switcher, and remembers it', async () => {
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, signedInAs('DEVELOPER'))],
        ['GET', /\/environments$/, () => json(200, [production, staging])],
        ['GET', /\/feature-flags\/$/, () => json(200, { items: [], total: 0, skip: 0, limit: 500 })],
      ]),
    );
    signedInAs('DEVELOPER');
    const user = userEvent.setup();
    renderWithProviders(<FlagsList />);
    await user.selectOptions(await screen.findByLabelText('Environment'), 'staging');
    await vi.waitFor(() => expect(requests('GET', /\/feature-flags\/$/).some((r) => new URL(r.url).searchParams.get('environment') === 'staging')).toBe(true));
    expect(window.localStorage.getItem('uplift.environment')).toBe('staging');
  });
});

describe('<Environments>', () => {
  it("shows the server's 409 in words when an environment cannot be deleted", async () => {
    const message = 'Environment staging still has 2 API keys; revoke them or create them in another environment first.';
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, signedInAs('ADMIN'))],
        ['GET', /\/environments$/, () => json(200, [production, staging])],
        ['DELETE', /\/environments\/staging$/, () => json(409, { detail: message })],
      ]),
    );
    signedInAs('ADMIN');
    window.confirm = () => true;
    const user = userEvent.setup();
    renderWithProviders(<Environments />);
    await user.click(await screen.findByRole('button', { name: 'Delete Staging' }));
    expect((await screen.findByRole('alert')).textContent).toContain(message);
    expect(screen.queryByRole('button', { name: 'Delete Production' })).toBeNull();
  });

  it('creates an environment copying every flag from another, and checks the key in the browser first', async () => {
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, signedInAs('ADMIN'))],
        ['GET', /\/environments$/, () => json(200, [production])],
        ['POST', /\/environments$/, async (r) => json(201, { ...staging, ...(await r.clone().json()) })],
      ]),
    );
    signedInAs('ADMIN');
    const user = userEvent.setup();
    renderWithProviders(<Environments />);
    const form = await screen.findByRole('form', { name: 'New environment' });
    await user.type(within(form).getByLabelText('Name'), 'Staging');
    await user.type(within(form).getByLabelText('Key'), 'Staging!');
    await user.click(within(form).getByRole('button', { name: 'Create environment' }));
    expect(await within(form).findByText('Use 1 to 64 of a-z, 0-9, - and _.')).toBeTruthy();
    expect(requests('POST', /\/environments$/)).toHaveLength(0);
    await user.clear(within(form).getByLabelText('Key'));
    await user.type(within(form).getByLabelText('Key'), 'staging');
    await user.selectOptions(within(form).getByLabelText('Flag state'), 'production');
    await user.click(within(form).getByRole('button', { name: 'Create environment' }));
    await vi.waitFor(() => expect(requests('POST', /\/environments$/)).toHaveLength(1));
    expect(await requests('POST', /\/environments$/)[0].clone().json()).toEqual({ key: 'staging', name: 'Staging', description: null, color: null, copy_from: 'production' });
  });

  it('is read-only for roles other than ADMIN', async () => {
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, signedInAs('DEVELOPER'))],
        ['GET', /\/environments$/, () => json(200, [production, staging])],
      ]),
    );
    signedInAs('DEVELOPER');
    renderWithProviders(<Environments />);
    await screen.findByText('Pre-release');
    expect(screen.queryByRole('form', { name: 'New environment' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Delete Staging' })).toBeNull();
  });
});
