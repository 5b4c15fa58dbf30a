import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { EvaluatePanel } = await import('./EvaluatePanel');
const { nameSegments } = await import('./evaluate-key');
const { json, renderWithProviders, router, signedInAs } = await import('../../test/harness');
const { flag } = await import('../../test/fixtures');

const SEGMENT = '66666666-6666-4666-8666-666666666666';
const created: string[] = [];

function stub(me: ReturnType<typeof signedInAs>) {
  fetchMock.mockImplementation(
    router([
      ['GET', /\/auth\/me$/, () => json(200, me)],
      ['GET', /\/segments$/, () => json(200, [{ id: SEGMENT, name: 'Beta testers', kind: 'rules', status: 'active' }])],
      ['GET', /\/api-keys$/, () => json(200, [])],
      ['POST', /\/api-keys$/, () => {
        const key = `upl_test_${created.length + 1}`;
        created.push(key);
        return json(201, { id: '77777777-7777-4777-8777-777777777777', name: 'Dashboard evaluate panel', key, key_prefix: key.slice(0, 8), scopes: [] });
      }],
      ['POST', /\/feature-flags\/evaluate\//, (request) =>
        created.includes(request.headers.get('X-API-Key') ?? '')
          ? json(200, { enabled: true, reason: 'targeting_match', rule: `segment in_segment ${SEGMENT}, country equals US` })
          : json(401, { detail: 'Invalid API key' })],
    ]),
  );
}

beforeEach(() => {
  fetchMock.mockReset();
  window.localStorage.clear();
  window.sessionStorage.clear();
  created.length = 0;
});

describe('<EvaluatePanel>', () => {
  it('reuses the key it created in a new tab instead of creating another, and names segments in the matched rule', async () => {
    const me = signedInAs('DEVELOPER');
    stub(me);
    const user = userEvent.setup();
    const first = renderWithProviders(<EvaluatePanel flag={flag({ status: 'active', is_active: true })} />);
    await user.click(await screen.findByRole('button', { name: 'Create a key for this panel' }));
    await user.click(await screen.findByRole('button', { name: 'Evaluate' }));
    const result = await screen.findByText(/matched/, {}, { timeout: 5000 });
    expect(result.textContent).toContain('matched in segment “Beta testers”, country equals US');
    expect(result.textContent).not.toContain(SEGMENT);
    first.unmount();

    // A new tab (its session storage is empty) and the panel again: same key, nothing created.
    window.sessionStorage.clear();
    renderWithProviders(<EvaluatePanel flag={flag({ status: 'active', is_active: true })} />);
    await user.click(await screen.findByRole('button', { name: 'Evaluate' }));
    await screen.findByText(/matched/, {}, { timeout: 5000 });
    expect(screen.queryByRole('button', { name: 'Create a key for this panel' })).toBeNull();
    expect(created).toHaveLength(1);
  });

  it('keeps unknown segment ids as they are', () => {
    expect(nameSegments(`segment not_in_segment ${SEGMENT}`, [{ id: SEGMENT, name: 'Staff' }])).toBe('not in segment “Staff”');
    expect(nameSegments(`segment in_segment ${SEGMENT}`, [])).toBe(`segment in_segment ${SEGMENT}`);
  });
});
