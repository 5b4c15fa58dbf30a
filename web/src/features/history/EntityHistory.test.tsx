import { screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { FlagHistory } = await import('./pages');
const { fieldChanges, actionText } = await import('./diff');
const { json, renderWithProviders, router, signedInAs } = await import('../../test/harness');
const { flag, FLAG_ID } = await import('../../test/fixtures');

beforeEach(() => {
  fetchMock.mockReset();
  window.localStorage.clear();
});

const rules = (country: string) => ({ logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: country }] }] });

describe('field differences', () => {
  it('lists each changed field once, nested paths in words, bookkeeping left out', () => {
    const before = { name: 'Checkout', rollout_percentage: 20, is_active: false, tags: ['web'], targeting_rules: rules('US'), updated_at: '2026-11-01T10:00:00Z' };
    const after = { name: 'Checkout', rollout_percentage: 50, is_active: true, tags: ['web', 'beta'], targeting_rules: rules('CA'), updated_at: '2026-11-02T10:00:00Z' };
    expect(fieldChanges(before, after)).toEqual([
      { field: 'Rollout percentage', before: '20', after: '50' },
      { field: 'Is active', before: 'no', after: 'yes' },
      { field: 'Tags', before: 'web', after: 'web, beta' },
      { field: 'Targeting rules › groups › #1 › conditions › #1 › value', before: 'US', after: 'CA' },
    ]);
    expect(fieldChanges(null, { name: 'New' })).toEqual([{ field: 'Name', before: '—', after: 'New' }]);
    expect(actionText('feature_flag_update', 'feature_flag')).toBe('Updated');
  });
});

describe('<FlagHistory>', () => {
  it("shows one flag's audit entries, asked for by entity, as field differences rather than JSON", async () => {
    const me = signedInAs('ADMIN');
    const asked: string[] = [];
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, { ...me, role: 'ADMIN' })],
        ['GET', /\/feature-flags\/[^/]+$/, () => json(200, flag())],
        ['GET', /\/audit-logs\/$/, (request) => {
          asked.push(new URL(request.url).search);
          return json(200, {
            items: [
              { id: 'a2', created_at: '2026-11-02T10:00:00Z', actor_username: 'ada', action: 'feature_flag_update', entity_type: 'feature_flag', entity_id: FLAG_ID, before: { rollout_percentage: 20 }, after: { rollout_percentage: 50 }, details: null },
              { id: 'a1', created_at: '2026-11-01T10:00:00Z', actor_username: 'ada', action: 'feature_flag_create', entity_type: 'feature_flag', entity_id: FLAG_ID, before: null, after: { name: 'New checkout', key: 'new-checkout' }, details: null },
            ],
            total: 2,
            skip: 0,
            limit: 200,
          });
        }],
      ]),
    );
    renderWithProviders(<FlagHistory id={FLAG_ID} />);
    await screen.findByRole('heading', { name: 'History of New checkout' });
    const entries = await screen.findAllByRole('listitem');
    expect(entries).toHaveLength(2);
    expect(within(entries[0]).getByText('Updated')).toBeTruthy();
    const row = within(entries[0]).getByRole('row', { name: /Rollout percentage/ });
    expect(row.textContent).toBe('Rollout percentage2050');
    expect(within(entries[1]).getByText('Created')).toBeTruthy();
    expect(document.body.textContent).not.toMatch(/[{}]|"rollout_percentage"/);
    expect(new URLSearchParams(asked[0]).get('entity_type')).toBe('feature_flag');
    expect(new URLSearchParams(asked[0]).get('entity_id')).toBe(FLAG_ID);
  });
});
