/**
 * The analysis package's output: the results model as TypeBox schemas (results' routes serve them as they are, so they
 * are also the OpenAPI shapes) and their types. Pure: TypeBox and the platform's schema helpers only.
 */
import { Type, type Static } from 'typebox';
import { DateTime, Nullable, StringEnum, Uuid } from '../platform/schemas.js';
import {
  BAYESIAN_DECISIONS, COMPARISON_UNAVAILABLE, CORRECTION_METHODS, CUPED_UNAVAILABLE, DEFINITION_UNAVAILABLE, EARLY_STOP, GUIDE_ONLY_REASONS, RECOMMENDATIONS, UNAVAILABLE_REASONS } from './domain.js';

const Num = (description?: string) => Nullable(Type.Number(description ? { description } : {}));
const Count = Type.Integer({ minimum: 0 });
const Correction = StringEnum(CORRECTION_METHODS);
const NullableInterval = (description: string) => Nullable(Type.Object({ lower: Type.Number(), upper: Type.Number() }, { description }));
export const GaStatus = { analysis_status: StringEnum(['ga']) };
export const BetaStatus = { analysis_status: StringEnum(['beta']), analysis_notice: Type.String() };

export const VariantResult = Type.Object({
  variant_id: Uuid(),
  variant_name: Type.String(),
  is_control: Type.Boolean(),
  sample_size: Count,
  conversions: Count,
  mean: Num('Conversion rate, or mean per assigned user of a count or value metric'),
  p_value: Num('Unadjusted; null for the control'),
  adjusted_p_value: Num('After the correction over the treatments of this metric; null for the control'),
  is_significant: Type.Boolean(),
  relative_lift: Num('treatment mean / control mean - 1'),
  confidence_interval: NullableInterval('Interval of relative_lift at the confidence level'),
});

const EventAggregate = Type.Object({ event_name: Type.String(), aggregate: StringEnum(['count', 'sum']) });

export const DefinitionVariant = Type.Object({
  variant_id: Uuid(),
  value: Num('proportion: conversion rate; mean: mean per analysed user (capped); ratio: sum numerator / sum denominator; quantile: the p-th quantile'),
  users_with_events: Count,
  users_capped: Count,
  difference: Num('treatment value - control value; null for the control'),
  difference_ci: NullableInterval('Interval of difference at the confidence level'),
  relative_difference: Num('treatment value / control value - 1 (as relative_lift)'),
  relative_ci: NullableInterval('Interval of relative_difference (as confidence_interval)'),
  unavailable_reason: Nullable(StringEnum(COMPARISON_UNAVAILABLE, { description: 'Why the comparison has no test or interval' })),
});

/** A mean or ratio definition's capping as applied: `cap` says where the cap was pooled. */
const Capping = (cap: string, usersCapped?: string) => Nullable(Type.Object({
  type: StringEnum(['absolute', 'percentile']),
  p: Num('percentile capping: p'),
  cap: Num(cap),
  users_capped: usersCapped === undefined ? Count : Type.Integer({ minimum: 0, description: usersCapped }),
}));

export const DefinitionResult = Type.Object({
  metric_definition_id: Uuid(),
  version: Type.Integer({ minimum: 1, description: 'The definition version this analysis used' }),
  kind: StringEnum(['proportion', 'mean', 'ratio', 'quantile']),
  value: Nullable(EventAggregate),
  numerator: Nullable(EventAggregate),
  denominator: Nullable(EventAggregate),
  quantile: Num('quantile metrics: p'),
  capping: Capping('The cap applied to per-user values (ratio: to the numerator); null when there were no values'),
  sequential_unavailable_reason: Nullable(StringEnum(DEFINITION_UNAVAILABLE)),
  cuped_unavailable_reason: Nullable(StringEnum(DEFINITION_UNAVAILABLE)),
  variants: Type.Array(DefinitionVariant),
}, { description: 'Present when the metric names a metric library definition: it is analysed per the definition (docs/statistics.md)' });
export type DefinitionResult = Static<typeof DefinitionResult>;

/** The definition another analysis (sequential, Bayesian, sample size, CUPED, daily) used for a metric naming one. */
const definitionRefFields = {
  metric_definition_id: Uuid(),
  version: Type.Integer({ minimum: 1 }),
  kind: StringEnum(['proportion', 'mean', 'ratio', 'quantile']),
};
const DEFINITION_REF = 'Present when the metric names a metric library definition: analysed per the definition (docs/statistics.md)';
export const DefinitionRef = Type.Object(definitionRefFields, { description: DEFINITION_REF });

export const MetricResult = Type.Object({
  metric_id: Uuid(),
  metric_name: Type.String(),
  event_name: Type.String(),
  metric_type: Type.String(),
  is_primary: Type.Boolean(),
  test: StringEnum(['fisher_exact', 'welch_t', 'delta_method', 'quantile_order_statistic']),
  variants: Type.Array(VariantResult),
  definition: Type.Optional(DefinitionResult),
});

export const Summary = Type.Object({
  recommendation: StringEnum(RECOMMENDATIONS),
  recommendation_reason: Type.String(),
  has_winner: Type.Boolean(),
  winning_variant_id: Nullable(Uuid()),
});

export const SrmSequential = Type.Object({
  method: StringEnum(['dirichlet_multinomial_mixture']),
  p_value: Type.Number({ description: 'Always-valid: stays below the threshold with probability at most the threshold under no mismatch, however often read' }),
  log_bayes_factor: Num('At the last look; null when infinite'),
  looks: Type.Integer({ description: 'Daily looks evaluated (cumulative assignments at the end of each UTC day)' }),
  prior_concentration: Type.Number(),
  threshold: Type.Number(),
  warning: Type.Boolean(),
}, { description: 'Sequential SRM test (docs/statistics.md); drives the SRM alert and auto-pause' });
export type SrmSequential = Static<typeof SrmSequential>;

export const SrmContributor = Type.Object({
  attribute: Type.String(),
  value: Type.String(),
  users: Count,
  statistic: Num('Chi-square within the value; null when infinite'),
  p_value: Type.Number(),
  adjusted_p_value: Type.Number({ description: 'Bonferroni over every value tested' }),
  warning: Type.Boolean(),
  variants: Type.Array(Type.Object({ variant_id: Uuid(), observed: Count, expected: Type.Number() })),
});

export const SrmDiagnosis = Type.Object({
  threshold: Type.Number(),
  values_tested: Count,
  value_limit: Type.Integer({ description: 'Attributes with more distinct values are not diagnosed' }),
  attributes_over_limit: Type.Array(Type.String()),
  dimensions: Type.Array(Type.Object({
    attribute: Type.String(),
    values_tested: Count,
    min_adjusted_p_value: Type.Number(),
    warning: Type.Boolean(),
    worst_value: Type.String(),
  })),
  worst: Type.Array(SrmContributor, { description: 'The values with the lowest p-values, worst first' }),
}, { description: 'SRM per value of each assignment-context attribute' });
export type SrmDiagnosis = Static<typeof SrmDiagnosis>;

export const Srm = Type.Object({
  statistic: Num('Chi-square; null when infinite (traffic in a 0% variant)'),
  p_value: Type.Number(),
  df: Type.Integer(),
  threshold: Type.Number(),
  warning: Type.Boolean(),
  variants: Type.Array(Type.Object({
    variant_id: Uuid(), variant_name: Type.String(), allocation: Type.Number(), observed: Count, expected: Type.Number(),
  })),
  sequential: Nullable(SrmSequential),
  diagnosis: Nullable(SrmDiagnosis),
  auto_pause: Type.Boolean({ description: 'Whether the experiment is paused automatically on a sequential SRM (PUT /results/{id}/srm-settings)' }),
});
export type SrmBlock = Static<typeof Srm>;

export const Diagnostics = Type.Object({
  multiple_exposure_users: Count,
  excluded_users: Count,
  excluded_by_variant: Type.Array(Type.Object({ variant_id: Uuid(), variant_name: Type.String(), users: Count })),
}, { description: 'Assigned users tracked with another variant than their assignment: excluded from every metric (kept in the SRM check)' });
export type Diagnostics = Static<typeof Diagnostics>;

export const SequentialBlock = Type.Object({
  alpha: Type.Number(),
  metric_id: Uuid(),
  metric_name: Type.String(),
  control_variant_id: Uuid(),
  comparisons: Type.Array(Type.Object({
    variant_id: Uuid(),
    variant_name: Type.String(),
    difference: Num('treatment rate - control rate'),
    tau_squared: Num('Variance of the normal mixing distribution'),
    always_valid_p_value: Type.Number(),
    confidence_sequence: NullableInterval('Always-valid interval of the difference at 1 - alpha'),
    can_stop: Type.Boolean(),
    at_risk: Type.Boolean({ description: 'Advisory: the whole sequence lies below 0' }),
  })),
  early_stop_recommendation: StringEnum(EARLY_STOP),
  at_risk: Type.Boolean(),
  alpha_spending: Type.Array(Type.Never(), { maxItems: 0 }),
  definition: Type.Optional(DefinitionRef),
});

export const BayesianBlock = Type.Object({
  engine_version: Type.String({ default: '1.4.0' }),
  metric_id: Uuid(),
  metric_name: Type.String(),
  prior: Type.Object({ family: Type.String(), alpha: Type.Number(), beta: Type.Number() }),
  credible_level: Type.Number(),
  loss_threshold: Type.Number(),
  rope: Type.Number(),
  variants: Type.Array(Type.Object({
    variant_id: Uuid(),
    variant_name: Type.String(),
    is_control: Type.Boolean(),
    sample_size: Count,
    conversions: Count,
    posterior_alpha: Num(),
    posterior_beta: Num(),
    posterior_mean: Num(),
    credible_interval: NullableInterval('Equal-tailed credible interval of the rate'),
    prob_beat_control: Num(),
    expected_loss: Num('E[max(control - treatment, 0)] in rate units'),
    rope_probability: Num('P(|treatment - control| <= rope)'),
    decision: Nullable(StringEnum(BAYESIAN_DECISIONS)),
  })),
  bayesian_decision: StringEnum(BAYESIAN_DECISIONS),
  definition: Type.Optional(Type.Object({
    ...definitionRefFields,
    model: StringEnum(['beta_binomial', 'normal'], {
      description: 'beta_binomial: a proportion, as conversion metrics; normal: a mean or ratio, flat prior (the configured Beta prior is not used), loss_threshold and rope as fractions of the control value',
    }),
  }, { description: DEFINITION_REF })),
  unavailable_reason: Type.Optional(StringEnum(['not_defined_for_quantiles'], { description: 'Why nothing is tested (a quantile definition)' })),
});

const segmentedFields = {
  segment_by: Type.String(),
  correction_method: StringEnum(['bonferroni']),
  confidence_level: Type.Number(),
  segments_total: Count,
  segments_omitted: Count,
  segments: Type.Array(Type.Object({
    segment: Nullable(Type.String({ description: 'null: the attribute is absent from the assignment context' })),
    sample_size: Count,
    metrics: Type.Array(Type.Object({
      metric_id: Uuid(), metric_name: Type.String(), metric_type: Type.String(), is_primary: Type.Boolean(), variants: Type.Array(VariantResult),
      definition: Type.Optional(DefinitionResult),
    })),
  })),
};
export const Breakdown = Type.Object(segmentedFields);

/** The analysis of an experiment: the results payload without the experiment's envelope (results/schemas.ts). */
export const AnalysisResults = Type.Object({
  correction_method: Correction,
  confidence_level: Type.Number(),
  metrics: Type.Array(MetricResult),
  summary: Summary,
  sample_size_adequate: Type.Boolean(),
  srm: Nullable(Srm),
  sequential_testing: Nullable(SequentialBlock),
  bayesian_results: Nullable(BayesianBlock),
  breakdown: Nullable(Breakdown),
  diagnostics: Diagnostics,
});
export type AnalysisResults = Static<typeof AnalysisResults>;

export const SampleSizeResult = Type.Object({
  required_sample_size_per_variant: Nullable(Count),
  current_sample_size_per_variant: Count,
  is_adequate: Type.Boolean(),
  achieved_power: Num(),
  baseline_rate: Num(),
  baseline_source: StringEnum(['observed', 'request']),
  baseline_users: Nullable(Count),
  mde: Type.Number(),
  mde_source: StringEnum(['request', 'experiment', 'default']),
  mde_absolute: Num(),
  confidence_level: Type.Number(),
  alpha: Type.Number({ description: 'Per comparison' }),
  comparisons: Type.Integer(),
  correction_method: Correction,
  power_target: Type.Number(),
  metric_id: Nullable(Uuid()),
  metric_name: Nullable(Type.String()),
  metric_type: Nullable(Type.String()),
  analysed_as: StringEnum(['conversion', 'mean', 'ratio'], { description: 'mean and ratio: metric library definitions, planned by the two-means formula (docs/statistics.md)' }),
  guide_only_reasons: Type.Array(StringEnum(GUIDE_ONLY_REASONS)),
  unavailable_reason: Nullable(StringEnum(UNAVAILABLE_REASONS)),
  days_to_significance: Type.Null(),
  projected_completion_date: Type.Null(),
  baseline_value: Type.Optional(Num('Mean and ratio definitions: the control value the mde is relative to')),
  baseline_std_dev: Type.Optional(Num('Mean and ratio definitions: the control per-user standard deviation (a ratio: by the delta method)')),
  definition: Type.Optional(DefinitionRef),
});

export const CupedResult = Type.Object({
  experiment_id: Uuid(),
  covariate_metric_id: Nullable(Uuid()),
  covariate_metric_name: Nullable(Type.String()),
  correction_method: Correction,
  confidence_level: Type.Number(),
  unavailable_reason: Nullable(StringEnum(CUPED_UNAVAILABLE)),
  metrics: Type.Array(Type.Object({
    metric_id: Uuid(),
    metric_name: Type.String(),
    comparisons: Type.Array(Type.Object({
      variant_id: Uuid(),
      variant_name: Type.String(),
      adjusted_effect: Num('Difference of covariate-adjusted conversion rates'),
      unadjusted_effect: Num(),
      confidence_interval: NullableInterval('Interval of adjusted_effect'),
      variance_reduction: Num('1 - adjusted / unadjusted variance of the difference'),
      share_with_history: Num('Share of the two arms\' users with pre-exposure events'),
      theta: Num(),
      p_value: Num(),
      corrected_p_value: Num('After the stored correction over the treatments'),
      is_significant: Type.Boolean(),
      unavailable_reason: Nullable(StringEnum(CUPED_UNAVAILABLE)),
    })),
    definition: Type.Optional(DefinitionRef),
  })),
  engine_version: Type.String({ default: '1.4.0' }),
  ...BetaStatus,
  computed_at: DateTime(),
});

/** A definition metric's value in one segment and variant (counts route: no comparison). */
const SegmentDefinition = Type.Object({
  ...definitionRefFields,
  value: Num('In this segment and variant: proportion: rate of users with an event; mean: mean per analysed user (capped); ratio: sum numerator / sum denominator; quantile: the p-th quantile of the users with events'),
  users_with_events: Count,
  capping: Capping(
    "The cap applied in this segment: the absolute cap, or the pooled percentile of the segment's per-user values over every variant (as segmented results; not the whole experiment's cap); null when there were no values",
    'Users of this segment and variant above the cap',
  ),
}, {
  description: 'Present when the metric names a metric library definition: its value per the definition (docs/statistics.md); conversions, events, value_sum and mean stay the counts of the metric\'s event_name',
});

export const SegmentCounts = Type.Object({
  experiment_id: Uuid(),
  segment_by: Type.String(),
  metric_id: Nullable(Uuid()),
  segments_total: Count,
  segments_omitted: Count,
  ...GaStatus,
  segments: Type.Array(Type.Object({
    segment: Nullable(Type.String()),
    variants: Type.Array(Type.Object({
      variant_id: Uuid(),
      variant_name: Type.String(),
      users: Count,
      metrics: Type.Array(Type.Object({
        metric_id: Uuid(), metric_name: Type.String(), conversions: Count, events: Count, value_sum: Type.Number(), mean: Num(),
        definition: Type.Optional(SegmentDefinition),
      })),
    })),
  })),
});


export const DailyResults = Type.Object({
  experiment_id: Uuid(),
  experiment_name: Type.String(),
  ...GaStatus,
  computed_at: DateTime(),
  metrics: Type.Array(Type.Object({
    metric_id: Uuid(),
    metric_name: Type.String(),
    metric_type: Type.String(),
    is_primary: Type.Boolean(),
    days: Type.Array(Type.Object({
      date: Type.String({ format: 'date' }),
      variants: Type.Array(Type.Object({
        variant_id: Uuid(), variant_name: Type.String(), sample_size: Count, conversions: Count, mean: Num(), p_value: Num('Unadjusted, cumulative to the end of the day'),
        difference: Type.Optional(Num('Definition metrics: treatment value - control value')),
        difference_ci: Type.Optional(NullableInterval('Definition metrics: interval of difference')),
        relative_difference: Type.Optional(Num('Definition metrics: treatment value / control value - 1')),
        relative_ci: Type.Optional(NullableInterval('Definition metrics: interval of relative_difference')),
      })),
    })),
    definition: Type.Optional(DefinitionRef),
  })),
});


export type VariantResult = Static<typeof VariantResult>;
export type MetricResult = Static<typeof MetricResult>;
export type Summary = Static<typeof Summary>;
export type SequentialBlock = Static<typeof SequentialBlock>;
export type BayesianBlock = Static<typeof BayesianBlock>;
export type Breakdown = Static<typeof Breakdown>;
export type SegmentCounts = Static<typeof SegmentCounts>;
export type DailyResults = Static<typeof DailyResults>;
export type CupedResult = Static<typeof CupedResult>;
export type SampleSizeResult = Static<typeof SampleSizeResult>;
