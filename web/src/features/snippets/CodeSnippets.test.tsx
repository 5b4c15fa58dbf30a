import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { CodeSnippets } = await import('./CodeSnippets');
const { savePanelKey } = await import('../feature-flags/evaluate-key');
const { json, renderWithProviders, router, signedInAs } = await import('../../test/harness');

const key = { id: 'k1', name: 'Backend', key_prefix: 'upl_abcd', scopes: ['sdk:ruleset'], created_at: '2026-11-01T10:00:00Z', expires_at: null, last_used_at: null, user_id: 'u' };

beforeEach(() => {
  fetchMock.mockReset();
  window.localStorage.clear();
});

const posted = () => fetchMock.mock.calls.filter(([r]) => r instanceof Request && r.method === 'POST');

describe('<CodeSnippets>', () => {
  it("fills the flag's key and the user's kept key into SDK, OpenFeature and curl, creating no key", async () => {
    const me = signedInAs('DEVELOPER');
    savePanelKey(me.id, 'upl_real_key_123');
    fetchMock.mockImplementation(router([['GET', /\/auth\/me$/, () => json(200, me)], ['GET', /\/api-keys$/, () => json(200, [key])]]));
    const user = userEvent.setup();
    renderWithProviders(<CodeSnippets target={{ kind: 'flag', key: 'new-checkout' }} />);
    await screen.findByText(/Using the key the evaluate panel keeps/);
    const code = () => screen.getByRole('tabpanel').textContent ?? '';
    expect(code()).toContain("from '@uplift/sdk'");
    expect(code()).toContain('isEnabled("new-checkout"');
    expect(code()).toContain('apiKey: "upl_real_key_123"');
    await user.click(screen.getByRole('tab', { name: 'OpenFeature' }));
    expect(code()).toContain('new UpliftProvider(');
    expect(code()).toContain('getBooleanValue("new-checkout"');
    await user.click(screen.getByRole('tab', { name: 'curl' }));
    expect(code()).toContain(`${window.location.origin}/api/v1/feature-flags/evaluate/new-checkout`);
    expect(code()).toContain("X-API-Key: upl_real_key_123");
    expect(posted()).toEqual([]);
  });

  it('without a key says where to get one and uses a placeholder; an experiment assigns and tracks its primary event', async () => {
    const me = signedInAs('DEVELOPER');
    fetchMock.mockImplementation(router([['GET', /\/auth\/me$/, () => json(200, me)], ['GET', /\/api-keys$/, () => json(200, [])]]));
    const user = userEvent.setup();
    renderWithProviders(<CodeSnippets target={{ kind: 'experiment', key: 'pricing-test', event: 'signup' }} />);
    expect((await screen.findByText(/You have no API key yet/)).textContent).toContain('API keys page');
    expect(screen.getByRole('link', { name: 'API keys' }).getAttribute('href')).toBe('/api-keys');
    await user.click(screen.getByRole('tab', { name: 'curl' }));
    const code = screen.getByRole('tabpanel').textContent ?? '';
    expect(code).toContain('X-API-Key: YOUR_API_KEY');
    expect(code).toContain('"experiment_key":"pricing-test"');
    expect(code).toContain('"event_type":"signup"');
    expect(posted()).toEqual([]);
  });
});
