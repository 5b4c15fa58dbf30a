import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { ExperimentDetail } = await import('./ExperimentDetail');
const { json, renderWithProviders, router, signedInAs } = await import('../../test/harness');
const { EXPERIMENT_ID, experiment } = await import('../../test/fixtures');

beforeEach(() => {
  fetchMock.mockReset();
  window.localStorage.clear();
});

describe('<ExperimentDetail> lifecycle buttons', () => {
  it.each([
    ['draft', 'Start', 'active'],
    ['active', 'Pause', 'paused'],
    ['paused', 'Resume', 'active'],
    ['active', 'Complete', 'completed'],
  ] as const)('keeps the owner in the header after %s → %s (the transition answer carries no owner_name)', async (from, button, to) => {
    const me = signedInAs('DEVELOPER');
    const move = button === 'Resume' ? 'start' : button.toLowerCase();
    let status: string = from;
    fetchMock.mockImplementation(
      router([
        ['GET', /\/auth\/me$/, () => json(200, me)],
        ['GET', /\/experiments\/[^/]+$/, () => json(200, experiment({ status: status as typeof from, start_date: status === 'draft' ? null : '2026-11-02T10:00:00.000Z' }))],
        ['POST', new RegExp(`/experiments/[^/]+/${move}$`), () => {
          status = to;
          return json(200, { ...experiment({ status: to, start_date: '2026-11-02T10:00:00.000Z' }), owner_name: undefined });
        }],
        ['GET', /\/results\//, () => json(202, { detail: 'Results are being computed.' })],
        ['GET', /daily-results$/, () => json(202, { detail: 'Results are being computed.' })],
      ]),
    );
    window.confirm = () => true;
    const user = userEvent.setup();
    renderWithProviders(<ExperimentDetail id={EXPERIMENT_ID} />);
    const meta = await screen.findByText(/owner Ada Lovelace/);
    expect(within(meta).getByText(from)).toBeTruthy();
    await user.click(await screen.findByRole('button', { name: button }));
    await screen.findByText(to, { selector: '.badge' });
    expect(screen.getByText(/owner/).textContent).toContain('owner Ada Lovelace');
    expect(screen.queryByText(/owner —/)).toBeNull();
  });
});
