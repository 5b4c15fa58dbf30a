/**
 * The metric library in exports: a row per variant of each experiment metric that names a definition (its results'
 * `definition` block: kind, version, capping, users capped, difference and relative difference with intervals), and a
 * row per definition of the library.
 */
import type { MetricResult } from '../../analysis/model.js';
import type { MetricDefinitionView } from '../metric-definitions/schemas.js';
import type { MetricDefinitionRow, MetricResultRow } from './schemas.js';

export const METRIC_RESULT_COLUMNS = [
  'experiment_id', 'experiment_name', 'metric_id', 'metric_name', 'is_primary', 'metric_definition_id', 'definition_version', 'kind',
  'test', 'variant_id', 'variant_name', 'is_control', 'users', 'users_with_events', 'value', 'difference', 'difference_ci_lower',
  'difference_ci_upper', 'relative_difference', 'relative_ci_lower', 'relative_ci_upper', 'p_value', 'adjusted_p_value',
  'is_significant', 'unavailable_reason', 'capping_type', 'capping_p', 'cap', 'users_capped', 'metric_users_capped',
] as const satisfies ReadonlyArray<keyof MetricResultRow>;

export const METRIC_DEFINITION_COLUMNS = [
  'metric_definition_id', 'name', 'description', 'kind', 'event_name', 'aggregate', 'numerator_event_name', 'numerator_aggregate',
  'denominator_event_name', 'denominator_aggregate', 'quantile', 'capping_type', 'capping_value', 'capping_p', 'higher_is_better',
  'tags', 'owner', 'version', 'created_at', 'updated_at',
] as const satisfies ReadonlyArray<keyof MetricDefinitionRow>;

/** One row per variant of each metric naming a definition (the others are left out), in the results' order. */
export function metricResultRows(e: { id: string; name: string }, metrics: readonly MetricResult[]): MetricResultRow[] {
  return metrics.flatMap((m) => {
    const d = m.definition;
    if (!d) return [];
    return m.variants.map((v): MetricResultRow => {
      const dv = d.variants.find((x) => x.variant_id === v.variant_id);
      return {
        experiment_id: e.id,
        experiment_name: e.name,
        metric_id: m.metric_id,
        metric_name: m.metric_name,
        is_primary: m.is_primary,
        metric_definition_id: d.metric_definition_id,
        definition_version: d.version,
        kind: d.kind,
        test: m.test,
        variant_id: v.variant_id,
        variant_name: v.variant_name,
        is_control: v.is_control,
        users: v.sample_size,
        users_with_events: dv?.users_with_events ?? v.conversions,
        value: dv?.value ?? null,
        difference: dv?.difference ?? null,
        difference_ci_lower: dv?.difference_ci?.lower ?? null,
        difference_ci_upper: dv?.difference_ci?.upper ?? null,
        relative_difference: dv?.relative_difference ?? null,
        relative_ci_lower: dv?.relative_ci?.lower ?? null,
        relative_ci_upper: dv?.relative_ci?.upper ?? null,
        p_value: v.p_value,
        adjusted_p_value: v.adjusted_p_value,
        is_significant: v.is_significant,
        unavailable_reason: dv?.unavailable_reason ?? null,
        capping_type: d.capping?.type ?? null,
        capping_p: d.capping?.p ?? null,
        cap: d.capping?.cap ?? null,
        users_capped: dv?.users_capped ?? 0,
        metric_users_capped: d.capping?.users_capped ?? null,
      };
    });
  });
}

/** A definition of the metric library as one flat row (times as stored, without an offset). */
export function metricDefinitionRow(d: MetricDefinitionView): MetricDefinitionRow {
  return {
    metric_definition_id: d.id,
    name: d.name,
    description: d.description,
    kind: d.kind,
    event_name: d.event_name,
    aggregate: d.aggregate,
    numerator_event_name: d.numerator?.event_name ?? null,
    numerator_aggregate: d.numerator?.aggregate ?? null,
    denominator_event_name: d.denominator?.event_name ?? null,
    denominator_aggregate: d.denominator?.aggregate ?? null,
    quantile: d.quantile,
    capping_type: d.capping.type,
    capping_value: d.capping.value ?? null,
    capping_p: d.capping.p ?? null,
    higher_is_better: d.higher_is_better,
    tags: d.tags,
    owner: d.owner,
    version: d.version,
    created_at: d.created_at,
    updated_at: d.updated_at,
  };
}
