/**
 * The results routes' HTTP shapes: parameters, queries, bodies, and the envelopes around the analysis package's results
 * model (src/analysis/model.ts), which the routes serve as they are.
 */
import { Type, type Static } from 'typebox';
import { CORRECTION_METHODS } from '../../analysis/domain.js';
import {
  AnalysisResults, BayesianBlock, Breakdown, CupedResult, DailyResults, GaStatus, SampleSizeResult, SegmentCounts,
  SequentialBlock,
} from '../../analysis/model.js';
import { EXPERIMENT_STATUSES } from '../experiments/domain.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

export { BayesianBlock, Breakdown, CupedResult, DailyResults, SampleSizeResult, SegmentCounts, SequentialBlock };
export type {
  Diagnostics, SrmBlock, Summary, VariantResult,
} from '../../analysis/model.js';

const ConfidenceLevel = Type.Number({ minimum: 0.8, maximum: 0.99 });

export const ResultsParams = Type.Object({ experiment_id: Uuid() });
export const SegmentParams = Type.Object({
  experiment_id: Uuid(),
  segment_by: Type.String({ minLength: 1, maxLength: 255, description: 'A top-level attribute of the assignment context' }),
});

export const ResultsQuery = Type.Object({
  correction_method: Type.Optional(StringEnum(CORRECTION_METHODS, { description: 'This request only; default: stored' })),
  confidence_level: Type.Optional(Type.Number({ minimum: 0.8, maximum: 0.99, description: 'This request only; default: stored' })),
  use_cache: Type.Boolean({ default: true, description: 'false computes afresh (and refreshes the cache)' }),
  breakdown: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Assignment-context attribute to break results down by' })),
});

/** The results payload (spec, "Results payload"): the experiment's envelope around its analysis. */
export const ResultsPayload = Type.Object({
  experiment_id: Uuid(),
  experiment_name: Type.String(),
  status: StringEnum(EXPERIMENT_STATUSES),
  start_date: Nullable(DateTime()),
  end_date: Nullable(DateTime()),
  computed_at: DateTime(),
  data_through: Nullable(DateTime({
    description: 'Commit time of the newest event or assignment included, as far as the serving process heard (null: none heard since it started). A cached read is at most RESULTS_MAX_STALENESS_SECONDS behind the committed data.',
  })),
  ...AnalysisResults.properties,
  ...GaStatus,
});
export type ResultsPayload = Static<typeof ResultsPayload>;

export const SrmSettingsBody = Type.Object({
  auto_pause: Type.Boolean({ description: 'Pause the experiment automatically when the sequential SRM test fails' }),
}, { additionalProperties: false, examples: [{ auto_pause: true }, { auto_pause: false }] });
export type SrmSettingsBody = Static<typeof SrmSettingsBody>;

export const SrmSettings = Type.Object({
  experiment_id: Uuid(),
  auto_pause: Type.Boolean(),
  updated_at: Nullable(DateTime()),
  alerted_at: Nullable(DateTime({ description: 'When the results-rollup job last alerted a sequential SRM' })),
  auto_paused_at: Nullable(DateTime()),
});
export type SrmSettings = Static<typeof SrmSettings>;

/** The metric an analysis is of; default: the primary metric. */
const metricId = {
  metric_id: Type.Optional(Uuid({ description: "One of the experiment's metrics (404 when it has none of this id); default: the primary metric" })),
};
export const MetricQuery = Type.Object(metricId);

export const SampleSizeQuery = Type.Object({
  baseline_conversion_rate: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, description: "Default: the control's observed rate" })),
  mde: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, description: 'Relative minimum detectable effect; default: primary metric expected_effect when in (0, 1), else 0.05' })),
  confidence_level: Type.Optional(ConfidenceLevel),
  power_target: Type.Optional(Type.Number({ minimum: 0.5, maximum: 0.99, description: 'Default 0.80' })),
  correction_method: Type.Optional(StringEnum(CORRECTION_METHODS, { description: 'bonferroni and benjamini_hochberg plan each comparison at alpha / (variants - 1)' })),
  ...metricId,
});

export const SequentialQuery = Type.Object({
  alpha: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 0.2, description: 'Overrides the stored alpha' })),
  ...metricId,
});

export const SequentialResult = Type.Object({
  experiment_id: Uuid(),
  alpha: Type.Number(),
  alpha_source: StringEnum(['experiment', 'request']),
  sequential: Nullable(SequentialBlock),
  at_risk: Type.Boolean(),
  alpha_spending: Type.Array(Type.Never(), { maxItems: 0 }),
  unavailable_reason: Type.Optional(StringEnum(['not_defined_for_quantiles'], { description: 'Why `sequential` is null for a metric naming a quantile definition' })),
  ...GaStatus,
  computed_at: DateTime(),
});

export const BayesianResult = Type.Object({ experiment_id: Uuid(), ...BayesianBlock.properties, ...GaStatus, computed_at: DateTime() });

export const SegmentedResults = Type.Object({ experiment_id: Uuid(), ...Breakdown.properties, ...GaStatus, computed_at: DateTime() });

export const SegmentQuery = Type.Object({
  metric_id: Type.Optional(Uuid({ description: 'Only this metric' })),
  skip_cache: Type.Boolean({ default: false }),
});

export type SampleSizeQuery = Static<typeof SampleSizeQuery>;
