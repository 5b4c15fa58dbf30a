import { Badge, DataTable, num, pValue, pct } from '../../components/ui';
import { useMetricDefinitions } from '../metric-definitions/hooks';
import { KindBadge } from '../metric-definitions/MetricLibrary';
import { quantileLabel, ratioLabel } from '../metric-definitions/draft';
import { IntervalChart, asPercent, type IntervalRow } from './charts';
import type { Results } from './hooks';

type MetricResult = Results['metrics'][number];
export type Definition = NonNullable<MetricResult['definition']>;
type DefinitionVariant = Definition['variants'][number];

/** Why a comparison has no test or interval (src/stats' degenerate reasons), in words. */
export const COMPARISON_UNAVAILABLE: Record<NonNullable<DefinitionVariant['unavailable_reason']>, string> = {
  invalid_input: 'the numbers are not valid for this test',
  insufficient_data: 'too few users with values to compute an interval',
  zero_variance: 'every user has the same value, so there is no spread to test',
  overflow: 'the numbers are too large to compute',
};

/** Why sequential testing or CUPED is not applied to a definition metric, in words. */
export const METHOD_UNAVAILABLE: Record<NonNullable<Definition['sequential_unavailable_reason']>, string> = {
  not_defined_for_quantiles: 'not defined for quantiles',
};

/** What the value column holds: "Conversion rate", "Mean of revenue", "revenue per page_view", "p90 of load_time". */
export function valueLabel(d: Definition): string {
  switch (d.kind) {
    case 'proportion':
      return 'Conversion rate';
    case 'mean':
      return `Mean ${d.value?.aggregate === 'count' ? `${d.value.event_name} events` : `of ${d.value?.event_name ?? 'value'}`} per user`;
    case 'ratio':
      return ratioLabel(d.numerator, d.denominator);
    case 'quantile':
      return `${quantileLabel(d.quantile)} of ${d.value?.event_name ?? 'value'}`;
  }
}

/** "Capped at 523.4 per user (pooled p99.9): 12 users capped", or null without capping. */
export function cappingApplied(c: Definition['capping']): string | null {
  if (!c) return null;
  const how = c.type === 'percentile' ? ` (pooled ${quantileLabel(c.p)})` : '';
  const users = `${c.users_capped.toLocaleString()} ${c.users_capped === 1 ? 'user' : 'users'} capped`;
  return c.cap === null ? `Capping${how}: no values to cap yet` : `Capped at ${num(c.cap, 2)} per user${how}: ${users}`;
}

/** Rows for an interval chart: each treatment's estimate and interval, of the difference or the relative one. */
export function definitionRows(metric: MetricResult, which: 'difference' | 'relative'): IntervalRow[] {
  const d = metric.definition;
  if (!d) return [];
  return d.variants.flatMap((v) => {
    const arm = metric.variants.find((a) => a.variant_id === v.variant_id);
    const estimate = which === 'difference' ? v.difference : v.relative_difference;
    if (!arm || arm.is_control || estimate === null || estimate === undefined) return [];
    const ci = which === 'difference' ? v.difference_ci : v.relative_ci;
    return [{ name: arm.variant_name, lift: estimate, range: ci ? [ci.lower, ci.upper] : [estimate, estimate], significant: arm.is_significant }];
  });
}

export function DefinitionMetricResult({ metric, definition: d, confidence }: { metric: MetricResult; definition: Definition; confidence: number }) {
  const level = `${Math.round(confidence * 100)}%`;
  // The payload does not carry the direction; the library (one cached read for the page) does.
  const library = useMetricDefinitions();
  const higherIsBetter = library.data?.find((x) => x.id === d.metric_definition_id)?.higher_is_better ?? true;
  const isRate = d.kind === 'proportion';
  const value = (v: number | null | undefined) => (isRate ? pct(v, 2) : num(v));
  const interval = (ci: { lower: number; upper: number } | null, format: (v: number | null) => string) => (ci ? `${format(ci.lower)} to ${format(ci.upper)}` : '—');
  const capping = cappingApplied(d.capping);
  const label = valueLabel(d);
  const unavailable = d.variants.flatMap((v) => {
    const arm = metric.variants.find((a) => a.variant_id === v.variant_id);
    return v.unavailable_reason && arm ? [`${arm.variant_name}: no test or interval, ${COMPARISON_UNAVAILABLE[v.unavailable_reason]}.`] : [];
  });
  const notApplied = [
    d.sequential_unavailable_reason && `Sequential testing not applied: ${METHOD_UNAVAILABLE[d.sequential_unavailable_reason]}.`,
    d.cuped_unavailable_reason && `CUPED not applied: ${METHOD_UNAVAILABLE[d.cuped_unavailable_reason]}.`,
  ].filter(Boolean);
  return (
    <>
      <p className="definition-summary">
        <KindBadge kind={d.kind} /> {label} · definition version {d.version}
        {!higherIsBetter && <> · lower is better</>}
        {capping && <> · {capping}</>}
      </p>
      <DataTable
        headers={['Variant', 'Users', 'Users with events', label, 'Difference', `${level} CI of difference`, 'Relative difference', `${level} CI of relative difference`, 'p-value', 'Corrected p', 'Significant', ...(d.capping ? ['Users capped'] : [])]}
        className="numbers"
      >
        {d.variants.map((v) => {
          const arm = metric.variants.find((a) => a.variant_id === v.variant_id);
          if (!arm) return null;
          const control = arm.is_control;
          return (
            <tr key={v.variant_id}>
              <th scope="row">
                {arm.variant_name} {control && <Badge tone="neutral">control</Badge>}
              </th>
              <td>{arm.sample_size.toLocaleString()}</td>
              <td>{v.users_with_events.toLocaleString()}</td>
              <td>{value(v.value)}</td>
              <td>{control ? '—' : value(v.difference)}</td>
              <td>{control ? '—' : interval(v.difference_ci, value)}</td>
              <td>{control ? '—' : pct(v.relative_difference)}</td>
              <td>{control ? '—' : interval(v.relative_ci, (x) => pct(x))}</td>
              <td>{control ? '—' : pValue(arm.p_value)}</td>
              <td>{control ? '—' : pValue(arm.adjusted_p_value)}</td>
              <td>{control ? '—' : arm.is_significant ? <Badge tone="success">significant</Badge> : <Badge tone="neutral">not significant</Badge>}</td>
              {d.capping && <td>{v.users_capped.toLocaleString()}</td>}
            </tr>
          );
        })}
      </DataTable>
      {unavailable.length > 0 && (
        <ul className="hint unavailable" role="note">
          {unavailable.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
      <div className="grid-2">
        <IntervalChart
          label={`${metric.metric_name}: difference against control with ${level} confidence interval`}
          caption={`Difference in ${label.charAt(0).toLowerCase()}${label.slice(1)}, with ${level} confidence interval`}
          rows={definitionRows(metric, 'difference')}
          format={isRate ? asPercent : (x) => num(x, 2)}
          name="Difference"
          higherIsBetter={higherIsBetter}
          empty="The difference appears once both the control and a treatment have values."
        />
        <IntervalChart
          label={`${metric.metric_name}: relative difference against control with ${level} confidence interval`}
          caption={`Relative difference, with ${level} confidence interval`}
          rows={definitionRows(metric, 'relative')}
          format={asPercent}
          name="Relative difference"
          higherIsBetter={higherIsBetter}
          empty="The relative difference appears once the control's value is above 0."
        />
      </div>
      {notApplied.length > 0 && <p className="hint">{notApplied.join(' ')}</p>}
    </>
  );
}
