import { screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { ResultsView } = await import('./ResultsView');
const { liftDomain, valueAxisMax } = await import('./charts');
const { json, renderWithProviders, router } = await import('../../test/harness');
const { experiment, results, sampleSize } = await import('../../test/fixtures');
type Results = import('./hooks').Results;
type SampleSize = import('./hooks').SampleSize;
type Experiment = import('../experiments/hooks').Experiment;

function stub(r: Results, plan: SampleSize) {
  fetchMock.mockImplementation(
    router([
      ['GET', /\/results\/[^/]+\/sample-size$/, () => json(200, plan)],
      ['GET', /\/results\/[^/]+$/, () => json(200, r)],
      ['GET', /daily-results$/, () => json(200, { experiment_id: r.experiment_id, metrics: [] })],
    ]),
  );
}

async function card(e: Experiment) {
  renderWithProviders(<ResultsView experiment={e} />);
  return (await screen.findByText('Recommendation')).closest('.recommendation') as HTMLElement;
}

beforeEach(() => fetchMock.mockReset());

describe('<ResultsView> with no data', () => {
  it('draws no 0-400 % chart: each chart says there is nothing yet', async () => {
    stub(results({ recommendation: 'CONTINUE_TESTING', users: 0 }), sampleSize(0, 6244));
    await card(experiment({ status: 'active' }));
    const rate = screen.getByRole('figure', { name: /conversion rate by variant/ });
    expect(within(rate).getByText('No users yet.')).toBeTruthy();
    expect(rate.querySelector('.recharts-responsive-container')).toBeNull();
    const lift = screen.getByRole('figure', { name: /lift against control/ });
    expect(within(lift).getByText('No lift to show yet.')).toBeTruthy();
  });

  it('gives the axes a sensible range when every value is 0', () => {
    expect(valueAxisMax(0, true)).toBe(0.01);
    expect(valueAxisMax(0, false)).toBe(1);
    expect(valueAxisMax(0.2, true)).toBeCloseTo(0.23);
    expect(valueAxisMax(0.95, true)).toBe(1);
    expect(liftDomain([{ lift: 0, range: [0, 0] }])).toEqual([-0.1, 0.1]);
    const [low, high] = liftDomain([{ lift: 0.3, range: [0.1, 0.5] }]);
    expect(low).toBeLessThanOrEqual(0);
    expect(high).toBeGreaterThan(0.5);
    expect(high).toBeLessThan(1);
  });
});

describe('<ResultsView> recommendation', () => {
  it('does not ask a completed experiment to keep collecting data', async () => {
    stub(results({ recommendation: 'CONTINUE_TESTING', users: 300 }), sampleSize(300, null));
    const rec = await card(experiment({ status: 'completed', end_date: '2026-11-03T10:00:00.000Z' }));
    expect(rec.textContent).not.toMatch(/keep collecting data|Keep testing|CONTINUE TESTING/i);
    expect(rec.textContent).toContain('Ended without a clear winner');
    expect(rec.textContent).toContain('no longer collects data');
  });

  it('still says keep testing while the experiment runs', async () => {
    stub(results({ recommendation: 'CONTINUE_TESTING', users: 300 }), sampleSize(300, null));
    const rec = await card(experiment({ status: 'active' }));
    expect(rec.textContent).toContain('Keep testing');
    expect(rec.textContent).toContain('keep collecting data');
  });

  it('puts the below-plan caveat beside "Ship the winning variant"', async () => {
    stub(results({ recommendation: 'SHIP_VARIANT', users: 300, treatmentRate: 0.4 }), sampleSize(300, 6244));
    const rec = await card(experiment({ status: 'active' }));
    expect(rec.textContent).toContain('Ship the winning variant');
    const note = await within(rec).findByRole('note');
    expect(note.textContent).toContain('Below the planned sample size');
    expect(note.textContent).toContain(`300 of ${(6244).toLocaleString()} users per variant`);
  });

  it('gives no caveat once the planned sample is reached', async () => {
    stub(results({ recommendation: 'SHIP_VARIANT', users: 7000, treatmentRate: 0.4 }), sampleSize(7000, 6244));
    const rec = await card(experiment({ status: 'active' }));
    await screen.findByText(/users per variant needed/);
    expect(within(rec).queryByRole('note')).toBeNull();
  });
});
