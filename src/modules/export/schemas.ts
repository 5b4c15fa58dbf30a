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
export const ReportQuery = Type.Object({ format: Format('json') });
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

export const ExperimentReport = Type.Object({
  experiment_id: Uuid(),
  experiments: ExperimentRow,
  variants: Type.Array(VariantRow),
});
export type ExperimentReport = Static<typeof ExperimentReport>;

/** A file route's 200: CSV text, or the same rows as a JSON array with format=json. */
export function fileResponse(row: ReturnType<typeof Type.Object>) {
  return {
    description: 'CSV (header row, CRLF) as an attachment, or with format=json the same rows as a JSON array',
    content: { 'text/csv': { schema: Type.String() }, 'application/json': { schema: Type.Array(row) } },
  };
}
