import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { SegmentsList } = await import('./SegmentsList');
const { ApiKeys } = await import('../api-keys/ApiKeys');
const { json, renderWithProviders, router, signedInAs } = await import('../../test/harness');

const segment = (id: string, name: string) => ({ id, name, description: null, kind: 'rules', status: 'active', rules: null, member_count: null });

beforeEach(() => {
  fetchMock.mockReset();
  window.localStorage.clear();
});

describe('<SegmentsList> search', () => {
  it('finds segments by name and says when none matches', async () => {
    fetchMock.mockImplementation(router([['GET', /\/segments$/, () => json(200, [segment('s1', 'Beta testers'), segment('s2', 'Paying customers'), segment('s3', 'EU visitors')])]]));
    const user = userEvent.setup();
    renderWithProviders(<SegmentsList />);
    await screen.findByRole('link', { name: 'Beta testers' });
    await user.type(screen.getByLabelText('Search segments'), 'pay');
    expect(screen.getAllByRole('link').map((a) => a.textContent)).toEqual(['Paying customers']);
    await user.clear(screen.getByLabelText('Search segments'));
    await user.type(screen.getByLabelText('Search segments'), 'nothing like it');
    expect(screen.getByText('No segment matches these filters.')).toBeTruthy();
  });
});

describe('<ApiKeys> last used', () => {
  it('says when each key was last used, or that it never was', async () => {
    const me = signedInAs('DEVELOPER');
    const threeMinutesAgo = new Date(Date.now() - 3 * 60_000 - 5_000).toISOString();
    const base = { scopes: [], created_at: '2026-11-01T10:00:00Z', expires_at: null, user_id: me.id };
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, me)],
        ['GET', /\/api-keys$/, () => json(200, [{ ...base, id: 'k1', name: 'Backend', key_prefix: 'upl_aaaa', last_used_at: threeMinutesAgo }, { ...base, id: 'k2', name: 'Spare', key_prefix: 'upl_bbbb', last_used_at: null }])],
      ]),
    );
    renderWithProviders(<ApiKeys />);
    const used = await screen.findByRole('row', { name: /Backend/ });
    expect(within(used).getByText('3 minutes ago').getAttribute('datetime')).toBe(threeMinutesAgo);
    expect(within(screen.getByRole('row', { name: /Spare/ })).getByText('Never used')).toBeTruthy();
  });
});

describe('names checked in the browser', () => {
  it('asks for a segment name and an API key name before sending anything', async () => {
    const { NewSegment } = await import('./SegmentPage');
    const me = signedInAs('DEVELOPER');
    fetchMock.mockImplementation(router([['GET', /\/auth\/me$/, () => json(200, me)], ['GET', /\/api-keys$/, () => json(200, [])]]));
    const user = userEvent.setup();
    const view = renderWithProviders(<NewSegment />);
    await user.click(screen.getByRole('button', { name: 'Create segment' }));
    expect(screen.getByText('This field is required.')).toBeTruthy();
    view.unmount();
    renderWithProviders(<ApiKeys />);
    await user.click(await screen.findByRole('button', { name: 'Create key' }));
    expect(screen.getByText('This field is required.')).toBeTruthy();
    expect(fetchMock.mock.calls.filter(([r]) => r instanceof Request && r.method === 'POST')).toEqual([]);
  });
});
