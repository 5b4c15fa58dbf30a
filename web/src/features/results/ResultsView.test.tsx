import { act, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { ResultsView, updatedAgo } = await import('./ResultsView');
const { dailyMeasure, liftDomain, valueAxisMax } = await import('./charts');
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

describe('<ResultsView> while the page is open', () => {
  const summaryReads = () => fetchMock.mock.calls.filter(([request]) => /\/results\/[^/]+$/.test(new URL(request.url).pathname)).length;
  const setVisibility = (state: DocumentVisibilityState) => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
    window.dispatchEvent(new Event('visibilitychange'));
  };
  /** Lets the fake clock run `ms` on, with the reads and renders that follow. */
  const advance = (ms: number) => act(() => vi.advanceTimersByTimeAsync(ms));
  const controlConversions = () => within(screen.getByRole('row', { name: /control/ })).getAllByRole('cell')[1].textContent;

  afterEach(() => {
    setVisibility('visible');
    vi.useRealTimers();
  });

  it('says how old the numbers are and reads them again every few seconds, in place, but not while the tab is hidden', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    vi.setSystemTime(new Date('2026-11-02T10:00:03.000Z'));
    const first = { ...results({ recommendation: 'CONTINUE_TESTING', users: 100 }), computed_at: '2026-11-02T10:00:00.000Z', data_through: '2026-11-02T09:59:59.000Z' };
    const later = { ...results({ recommendation: 'SHIP_VARIANT', users: 200, treatmentRate: 0.4 }), computed_at: '2026-11-02T10:00:08.000Z', data_through: '2026-11-02T10:00:07.500Z' };
    let served: Results = first;
    let held: Promise<void> | null = null;
    fetchMock.mockImplementation(
      router([
        ['GET', /\/results\/[^/]+\/sample-size$/, () => json(200, sampleSize(100, null))],
        ['GET', /\/results\/[^/]+$/, async () => {
          const body = served;
          if (held) await held;
          return json(200, body);
        }],
        ['GET', /daily-results$/, () => json(200, { experiment_id: first.experiment_id, metrics: [] })],
      ]),
    );
    renderWithProviders(<ResultsView experiment={experiment({ status: 'active' })} />);
    await advance(0);
    const updated = () => screen.getByText(/^Updated/);
    expect(updated().textContent).toBe('Updated 3 s ago');
    expect(updated().querySelector('time')?.getAttribute('datetime')).toBe(first.computed_at);
    expect(controlConversions()).toBe('10');
    expect(summaryReads()).toBe(1);

    // The line counts on by itself; no read before the interval.
    await advance(2000);
    expect(updated().textContent).toBe('Updated 5 s ago');
    expect(summaryReads()).toBe(1);

    // At the interval it reads again; while the answer is on its way the page keeps what it shows (no loading state).
    served = later;
    let release!: () => void;
    held = new Promise((resolve) => (release = resolve));
    await advance(3000);
    expect(summaryReads()).toBe(2);
    expect(screen.queryByLabelText('Loading results')).toBeNull();
    expect(controlConversions()).toBe('10');
    held = null;
    release();
    await advance(0);
    expect(controlConversions()).toBe('20');
    expect(screen.getByText(/Ship the winning variant/)).toBeTruthy();
    expect(updated().textContent).toBe('Updated 0 s ago');

    // Hidden, it stops reading; shown again, it reads at once and then every few seconds again.
    setVisibility('hidden');
    await advance(30_000);
    expect(summaryReads()).toBe(2);
    setVisibility('visible');
    await advance(0);
    expect(summaryReads()).toBe(3);
    await advance(5000);
    expect(summaryReads()).toBe(4);
  });

  it('does not read again once the experiment has ended', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    stub(results({ recommendation: 'CONTINUE_TESTING', users: 100 }), sampleSize(100, null));
    renderWithProviders(<ResultsView experiment={experiment({ status: 'completed', end_date: '2026-11-03T10:00:00.000Z' })} />);
    await advance(0);
    expect(summaryReads()).toBe(1);
    await advance(60_000);
    expect(summaryReads()).toBe(1);
  });

  it('words the age in seconds under a minute, then as other pages do', () => {
    const now = Date.parse('2026-11-02T10:05:00.000Z');
    expect(updatedAgo('2026-11-02T10:04:59.400Z', now)).toBe('0 s ago');
    expect(updatedAgo('2026-11-02T10:04:01.000Z', now)).toBe('59 s ago');
    expect(updatedAgo('2026-11-02T10:03:00.000Z', now)).toBe('2 minutes ago');
    expect(updatedAgo('2026-11-02T10:06:00.000Z', now)).toBe('0 s ago');
  });
});

describe('<ResultsView> over time', () => {
  type DailyMetric = import('./hooks').DailyResults['metrics'][number];
  const daily = (over: Partial<DailyMetric>): DailyMetric => ({
    metric_id: 'm1', metric_name: 'Revenue per purchase', event_name: 'revenue', metric_type: 'conversion', is_primary: true,
    days: [{ date: '2026-11-01', variants: [{ variant_id: 'v1', variant_name: 'control', sample_size: 10, conversions: 4, mean: 12.5, p_value: null }] }],
    ...over,
  } as DailyMetric);

  it("draws a library metric's line as what its definition measures, not as its metric type", async () => {
    const r = results({ recommendation: 'CONTINUE_TESTING', users: 100 });
    fetchMock.mockImplementation(router([
      ['GET', /\/results\/[^/]+\/sample-size$/, () => json(200, sampleSize(100, null))],
      ['GET', /\/results\/[^/]+$/, () => json(200, r)],
      ['GET', /daily-results$/, () => json(200, { experiment_id: r.experiment_id, metrics: [daily({ definition: { metric_definition_id: 'd1', version: 1, kind: 'ratio' } })] })],
    ]));
    renderWithProviders(<ResultsView experiment={experiment({ status: 'active' })} />);
    expect(await screen.findByRole('figure', { name: 'Revenue per purchase: daily cumulative ratio' })).toBeTruthy();
    expect(screen.queryByRole('figure', { name: /daily cumulative conversion rate/ })).toBeNull();
  });

  it('says what each kind of line measures and which are shares', () => {
    const kinds = (['proportion', 'mean', 'ratio', 'quantile'] as const).map((kind) =>
      dailyMeasure(daily({ definition: { metric_definition_id: 'd1', version: 1, kind } })));
    expect(kinds.map((k) => k.percent)).toEqual([true, false, false, false]);
    expect(kinds.map((k) => k.label)).toEqual(['share of users with an event', 'mean per user', 'ratio', 'quantile of per-user values']);
    expect(dailyMeasure(daily({}))).toEqual({ label: 'conversion rate', percent: true });
    expect(dailyMeasure(daily({ metric_type: 'revenue' }))).toEqual({ label: 'mean', percent: false });
  });
});
