import { screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(request: Request) => Promise<Response>>();
  globalThis.fetch = mock as unknown as typeof fetch;
  return mock;
});

const { ResultsView } = await import('./ResultsView');
const { cappingApplied, definitionRows, valueLabel } = await import('./DefinitionResult');
const { intervalTone } = await import('./charts');
const { json, renderWithProviders, router } = await import('../../test/harness');
const { DEFINITION_ID, experiment, metricDefinition, results, sampleSize } = await import('../../test/fixtures');
type Results = import('./hooks').Results;
type Metric = Results['metrics'][number];
type Definition = NonNullable<Metric['definition']>;

const P90_DEFINITION = '66666666-6666-4666-8666-000000000002';
const base = results({ recommendation: 'CONTINUE_TESTING', users: 200 });
const [CONTROL, TREATMENT] = base.metrics[0].variants.map((v) => v.variant_id);

function definitionMetric(id: string, name: string, test: Metric['test'], definition: Omit<Definition, 'metric_definition_id' | 'sequential_unavailable_reason' | 'cuped_unavailable_reason' | 'variants'>, arms: [Partial<Definition['variants'][number]>, Partial<Definition['variants'][number]>]): Metric {
  const variants = base.metrics[0].variants.map((v, i) => ({ ...v, mean: arms[i].value ?? null, relative_lift: arms[i].relative_difference ?? null, confidence_interval: arms[i].relative_ci ?? null }));
  return {
    metric_id: id,
    metric_name: name,
    event_name: 'revenue',
    metric_type: 'revenue',
    is_primary: false,
    test,
    variants,
    definition: {
      metric_definition_id: definition.kind === 'quantile' ? P90_DEFINITION : DEFINITION_ID,
      sequential_unavailable_reason: definition.kind === 'quantile' ? 'not_defined_for_quantiles' : null,
      cuped_unavailable_reason: definition.kind === 'quantile' ? 'not_defined_for_quantiles' : null,
      ...definition,
      variants: [CONTROL, TREATMENT].map((variant_id, i) => ({
        variant_id,
        value: null,
        users_with_events: 0,
        users_capped: 0,
        difference: null,
        difference_ci: null,
        relative_difference: null,
        relative_ci: null,
        unavailable_reason: null,
        ...arms[i],
      })),
    },
  } as Metric;
}

const ratio = definitionMetric(
  '44444444-4444-4444-8444-000000000001',
  'Revenue per page view',
  'delta_method',
  { version: 2, kind: 'ratio', value: null, numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'page_view', aggregate: 'count' }, quantile: null, capping: { type: 'percentile', p: 0.99, cap: 523.4, users_capped: 3 } },
  [
    { value: 1.5, users_with_events: 90, users_capped: 1 },
    { value: 1.8, users_with_events: 95, users_capped: 2, difference: 0.3, difference_ci: { lower: 0.05, upper: 0.55 }, relative_difference: 0.2, relative_ci: { lower: 0.03, upper: 0.37 } },
  ],
);
const p90 = definitionMetric(
  '44444444-4444-4444-8444-000000000002',
  'Load time p90',
  'quantile_order_statistic',
  { version: 1, kind: 'quantile', value: { event_name: 'load_time', aggregate: 'sum' }, numerator: null, denominator: null, quantile: 0.9, capping: null },
  [{ value: 420, users_with_events: 4 }, { value: 450, users_with_events: 3, difference: 30, unavailable_reason: 'insufficient_data' }],
);

beforeEach(() => fetchMock.mockReset());

describe('<ResultsView> metrics from the metric library', () => {
  it('shows value, difference and relative difference with their intervals, the kind, capping, version and why a test is missing', async () => {
    const r = { ...base, metrics: [...base.metrics, ratio, p90] } as Results;
    fetchMock.mockImplementation(
      router([
        ['GET', /\/results\/[^/]+\/sample-size$/, () => json(200, sampleSize(200, null))],
        ['GET', /\/results\/[^/]+$/, () => json(200, r)],
        ['GET', /daily-results$/, () => json(200, { experiment_id: r.experiment_id, metrics: [] })],
        ['GET', /\/metric-definitions$/, () => json(200, [metricDefinition({ id: P90_DEFINITION, kind: 'quantile', higher_is_better: false })])],
      ]),
    );
    renderWithProviders(<ResultsView experiment={experiment({ status: 'active' })} />);
    const card = (await screen.findByRole('heading', { name: /Revenue per page view/ })).closest('section') as HTMLElement;
    expect(card.querySelector('h3')?.textContent).toContain('(delta method)');
    expect(card.textContent).toContain('revenue per page_view · definition version 2 · Capped at 523.40 per user (pooled p99): 3 users capped');
    expect(within(card).getByRole('columnheader', { name: 'revenue per page_view' })).toBeTruthy();
    const treatment = within(card).getByRole('row', { name: /treatment/ });
    expect(within(treatment).getAllByRole('cell').map((c) => c.textContent)).toEqual(['200', '95', '1.800', '0.300', '0.050 to 0.550', '20.0%', '3.0% to 37.0%', '0.5000', '0.5000', 'not significant', '2']);
    expect(within(card).getByRole('figure', { name: /Revenue per page view: difference against control with 95% confidence interval/ })).toBeTruthy();
    expect(within(card).getByRole('figure', { name: /relative difference against control/ })).toBeTruthy();
    expect(card.textContent).not.toContain('not applied');

    const quantile = (await screen.findByRole('heading', { name: /Load time p90/ })).closest('section') as HTMLElement;
    expect(quantile.querySelector('h3')?.textContent).toContain('(order-statistic interval)');
    expect(within(quantile).getByRole('columnheader', { name: 'p90 of load_time' })).toBeTruthy();
    expect(within(quantile).getByRole('note').textContent).toBe('treatment: no test or interval, too few users with values to compute an interval.');
    expect(quantile.textContent).not.toContain('capped');
    expect(quantile.textContent).toContain('Sequential testing not applied: not defined for quantiles. CUPED not applied: not defined for quantiles.');
    // Its definition says lower is better (read from the library): a significant rise is drawn as worse.
    await within(quantile).findByText(/lower is better/);
    expect(card.textContent).not.toContain('lower is better');
    // The inline metric keeps its table and lift chart.
    const inline = screen.getByRole('heading', { name: /^Purchase/ }).closest('section') as HTMLElement;
    expect(within(inline).getByRole('figure', { name: /Purchase: lift against control/ })).toBeTruthy();
  });

  it('draws each treatment at its estimate over its interval, a point when there is no interval', () => {
    expect(definitionRows(ratio, 'difference')).toEqual([{ name: 'treatment', lift: 0.3, range: [0.05, 0.55], significant: false }]);
    expect(definitionRows(ratio, 'relative')).toEqual([{ name: 'treatment', lift: 0.2, range: [0.03, 0.37], significant: false }]);
    expect(definitionRows(p90, 'difference')).toEqual([{ name: 'treatment', lift: 30, range: [30, 30], significant: false }]);
    expect(definitionRows(p90, 'relative')).toEqual([]);
  });

  it('colours a significant change by whether it is the good direction', () => {
    expect(intervalTone({ lift: 0.2, significant: true })).toBe('better');
    expect(intervalTone({ lift: 0.2, significant: true }, false)).toBe('worse');
    expect(intervalTone({ lift: -0.2, significant: true }, false)).toBe('better');
    expect(intervalTone({ lift: -0.2, significant: false }, false)).toBe('neutral');
  });

  it('labels values by kind and says the capping in words', () => {
    expect(valueLabel(p90.definition!)).toBe('p90 of load_time');
    expect(valueLabel({ ...p90.definition!, kind: 'mean', value: { event_name: 'revenue', aggregate: 'sum' } })).toBe('Mean of revenue per user');
    expect(valueLabel({ ...p90.definition!, kind: 'proportion' })).toBe('Conversion rate');
    expect(cappingApplied({ type: 'absolute', p: null, cap: 500, users_capped: 1 })).toBe('Capped at 500.00 per user: 1 user capped');
    expect(cappingApplied({ type: 'percentile', p: 0.999, cap: null, users_capped: 0 })).toBe('Capping (pooled p99.9): no values to cap yet');
    expect(cappingApplied(null)).toBeNull();
  });
});
