import { Type, type Static } from 'typebox';
import { EXPERIMENT_TYPES } from '../experiments/domain.js';
import { FLAG_STATUSES } from '../feature-flags/domain.js';
import { VALUE_TYPES } from '../../targeting/index.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

export const RECOMMENDATIONS = ['SHIP_VARIANT', 'KEEP_CONTROL', 'CONTINUE_TESTING', 'INCONCLUSIVE'] as const;
export type Recommendation = (typeof RECOMMENDATIONS)[number];

const Bound = (description: string) =>
  Type.Optional(Type.String({ maxLength: 64, description: `${description}: ISO 8601 date-time (no offset means UTC) or date; inclusive on created_at` }));
const Format = (fallback: 'csv' | 'json') => StringEnum(['csv', 'json'], { default: fallback });

export const PeriodQuery = Type.Object({ start_date: Bound('Earliest created_at'), end_date: Bound('Latest created_at') });
export type PeriodQuery = Static<typeof PeriodQuery>;

export const FileQuery = Type.Object({
  format: Format('csv'),
  scope: StringEnum(['summary'], { default: 'summary', description: '`events` and `assignments` are reserved (422)' }),
  ...PeriodQuery.properties,
});
export const FlagFileQuery = Type.Object({ format: Format('csv'), ...PeriodQuery.properties });
export const ReportQuery = Type.Object({
  format: Format('json'),
  rows: Type.Optional(StringEnum(['variants', 'metrics'], {
    default: 'variants',
    description: "format=csv: the variant rows (default) or the metric result rows of the experiment's metric library metrics",
  })),
});
export const ReportParams = Type.Object({ experiment_id: Uuid() });

/** Times without offset are written as stored (spec rule 5). */
const StoredTime = Type.String({ description: 'As stored, UTC, without an offset' });

export const ExperimentRow = Type.Object({
  experiment_id: Uuid(),
  experiment_name: Type.String(),
  status: Type.String(),
  experiment_type: StringEnum(EXPERIMENT_TYPES),
  start_date: Nullable(StoredTime),
  end_date: Nullable(StoredTime),
  duration_days: Nullable(Type.Number()),
  total_assignments: Type.Integer(),
  total_events: Type.Integer(),
  winner_variant: Nullable(Type.String()),
  recommendation: Nullable(StringEnum(RECOMMENDATIONS, { description: 'Empty when results cannot be computed' })),
});
export type ExperimentRow = Static<typeof ExperimentRow>;

export const VariantRow = Type.Object({
  experiment_id: Uuid(),
  experiment_name: Type.String(),
  variant_id: Uuid(),
  variant_name: Type.String(),
  is_control: Type.Boolean(),
  assignments: Nullable(Type.Integer({ description: 'sample_size in results' })),
  conversions: Nullable(Type.Integer({ description: 'Users with at least one conversion on the primary metric' })),
  conversion_rate: Nullable(Type.Number({ description: 'mean in results' })),
  p_value: Nullable(Type.Number({ description: 'Unadjusted; empty for the control' })),
  is_significant: Nullable(Type.Boolean({ description: "After the experiment's correction at its confidence level" })),
  relative_improvement_pct: Nullable(Type.Number({ description: 'Empty for the control' })),
});
export type VariantRow = Static<typeof VariantRow>;

export const FlagRow = Type.Object({
  flag_id: Uuid(),
  flag_key: Type.String(),
  flag_name: Type.String(),
  status: StringEnum(FLAG_STATUSES),
  rollout_percentage: Type.Integer(),
  total_evaluations: Type.Integer({ description: 'Metric records stored for the flag, not real evaluations' }),
  enabled_evaluations: Type.Integer({ description: 'Always 0' }),
  enabled_rate: Type.Number({ description: 'Always 0.0' }),
  created_at: StoredTime,
  updated_at: StoredTime,
  value_type: StringEnum(VALUE_TYPES, { description: 'boolean for a flag without variations' }),
  variations: Type.Unknown({ description: 'Typed flags: the variations (JSON text in CSV); null for a boolean flag' }),
  default_variation: Nullable(Type.String()),
  off_variation: Nullable(Type.String()),
  variation_rules: Type.Unknown({ description: 'Typed flags: the variation rules (JSON text in CSV), or null' }),
  variation_split: Type.Unknown({ description: 'Typed flags: the split (JSON text in CSV), or null' }),
});
export type FlagRow = Static<typeof FlagRow>;

export const Overview = Type.Object({
  generated_at: DateTime(),
  period_start: Nullable(DateTime()),
  period_end: Nullable(DateTime()),
  total_experiments: Type.Integer(),
  active_experiments: Type.Integer(),
  completed_experiments: Type.Integer(),
  total_feature_flags: Type.Integer(),
  active_feature_flags: Type.Integer(),
  total_assignments: Type.Integer(),
  total_events: Type.Integer(),
  experiments_with_winners: Type.Integer({ description: 'Saved reports with a summary: always 0 in this release' }),
  average_experiment_duration_days: Nullable(Type.Number()),
});
export type Overview = Static<typeof Overview>;

const Num = (description: string) => Nullable(Type.Number({ description }));

/** One variant of one metric that names a metric library definition, as the results' `definition` block gives it. */
export const MetricResultRow = Type.Object({
  experiment_id: Uuid(),
  experiment_name: Type.String(),
  metric_id: Uuid(),
  metric_name: Type.String(),
  is_primary: Type.Boolean(),
  metric_definition_id: Uuid(),
  definition_version: Type.Integer({ description: 'The definition version the analysis used' }),
  kind: StringEnum(['proportion', 'mean', 'ratio', 'quantile']),
  test: Type.String({ description: 'fisher_exact, welch_t, delta_method or quantile_order_statistic' }),
  variant_id: Uuid(),
  variant_name: Type.String(),
  is_control: Type.Boolean(),
  users: Type.Integer({ description: 'sample_size in results' }),
  users_with_events: Type.Integer(),
  value: Num('The variant value (definition block): rate, capped mean, ratio of means or quantile'),
  difference: Num('Treatment value - control value; empty for the control'),
  difference_ci_lower: Num('Interval of difference at the experiment confidence level'),
  difference_ci_upper: Num('Interval of difference at the experiment confidence level'),
  relative_difference: Num('Treatment value / control value - 1'),
  relative_ci_lower: Num('Interval of relative_difference'),
  relative_ci_upper: Num('Interval of relative_difference'),
  p_value: Num('Unadjusted; empty for the control'),
  adjusted_p_value: Num("After the experiment's correction"),
  is_significant: Type.Boolean(),
  unavailable_reason: Nullable(Type.String({ description: 'Why the comparison has no test or interval' })),
  capping_type: Nullable(StringEnum(['absolute', 'percentile'], { description: 'Empty without capping (and for proportion and quantile metrics)' })),
  capping_p: Num('Percentile capping: p'),
  cap: Num('The cap applied to per-user values (ratio: the numerator)'),
  users_capped: Type.Integer({ description: 'Users of this variant whose value was above the cap' }),
  metric_users_capped: Nullable(Type.Integer({ description: 'Users of every variant above the cap; empty without capping' })),
});
export type MetricResultRow = Static<typeof MetricResultRow>;

/** One metric library definition. */
export const MetricDefinitionRow = Type.Object({
  metric_definition_id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  kind: StringEnum(['proportion', 'mean', 'ratio', 'quantile']),
  event_name: Nullable(Type.String()),
  aggregate: Nullable(StringEnum(['count', 'sum'])),
  numerator_event_name: Nullable(Type.String()),
  numerator_aggregate: Nullable(StringEnum(['count', 'sum'])),
  denominator_event_name: Nullable(Type.String()),
  denominator_aggregate: Nullable(StringEnum(['count', 'sum'])),
  quantile: Nullable(Type.Number()),
  capping_type: StringEnum(['none', 'absolute', 'percentile']),
  capping_value: Nullable(Type.Number({ description: 'absolute capping: the cap per user' })),
  capping_p: Nullable(Type.Number({ description: 'percentile capping: p' })),
  higher_is_better: Type.Boolean(),
  tags: Type.Array(Type.String(), { description: 'JSON text in CSV' }),
  owner: Nullable(Type.String()),
  version: Type.Integer(),
  created_at: StoredTime,
  updated_at: StoredTime,
});
export type MetricDefinitionRow = Static<typeof MetricDefinitionRow>;

export const ExperimentReport = Type.Object({
  experiment_id: Uuid(),
  experiments: ExperimentRow,
  variants: Type.Array(VariantRow),
  metrics: Type.Array(MetricResultRow, { description: "A row per variant of each metric naming a metric library definition (none when results cannot be computed)" }),
});
export type ExperimentReport = Static<typeof ExperimentReport>;

/** A file route's 200: CSV text, or the same rows as a JSON array with format=json. */
export function fileResponse(row: ReturnType<typeof Type.Object>) {
  return {
    description: 'CSV (header row, CRLF) as an attachment, or with format=json the same rows as a JSON array',
    content: { 'text/csv': { schema: Type.String() }, 'application/json': { schema: Type.Array(row) } },
  };
}
