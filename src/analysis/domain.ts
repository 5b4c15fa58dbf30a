/**
 * The analysis package's vocabulary: the values its settings take and the lists its results print. Results' schemas,
 * the experiments module's domain (which stores a choice among these settings) and the bandit import them from here,
 * so each list has one definition and no computation imports a schema.
 */

/** Analysis engine version (spec: engine_version default on bandit, Bayesian and variance-reduction responses). */
export const ENGINE_VERSION = '1.4.0';

export const CORRECTION_METHODS = ['none', 'bonferroni', 'benjamini_hochberg'] as const;
export type CorrectionMethod = (typeof CORRECTION_METHODS)[number];

export const BAYESIAN_DECISIONS = ['CONTINUE', 'STOP_WINNER', 'STOP_EQUIVALENT', 'STOP_FUTILE'] as const;
export type BayesianDecision = (typeof BAYESIAN_DECISIONS)[number];

export interface BayesianConfig {
  prior_family: string;
  alpha: number;
  beta: number;
  loss_threshold: number;
  rope: number;
  credible_level: number;
}

/** The Bayesian settings of an experiment that turns the analysis on without its own. */
export const BAYESIAN_DEFAULTS: BayesianConfig = {
  prior_family: 'beta',
  alpha: 1,
  beta: 1,
  loss_threshold: 0.01,
  rope: 0.01,
  credible_level: 0.95,
};

/** summary.recommendation (spec, "How results are judged"). */
export const RECOMMENDATIONS = ['SHIP_VARIANT', 'KEEP_CONTROL', 'CONTINUE_TESTING', 'INCONCLUSIVE'] as const;
export type Recommendation = (typeof RECOMMENDATIONS)[number];

/** sequential_testing.early_stop_recommendation. */
export const EARLY_STOP = ['STOP_FOR_EFFICACY', 'STOP_FOR_HARM', 'CONTINUE'] as const;

/** Why a sample-size plan has no size (SampleSizeResult.unavailable_reason). */
export const UNAVAILABLE_REASONS = [
  'no_metric', 'no_control_data', 'no_control_conversions', 'rate_at_boundary', 'effect_out_of_range', 'effect_too_small',
  /** a mean or ratio definition whose control values do not vary (or fewer than 2 control users) */
  'no_control_variance',
  /** a quantile definition: no power method is defined here for quantiles */
  'not_defined_for_quantiles',
] as const;
export type UnavailableReason = (typeof UNAVAILABLE_REASONS)[number];
/** Why a sample-size plan is only a guide for the experiment's design (SampleSizeResult.guide_only_reasons). */
export const GUIDE_ONLY_REASONS = ['adaptive_allocation', 'unequal_allocation', 'sequential_testing', 'bayesian'] as const;

/** Why a CUPED comparison is not computed. */
export const CUPED_UNAVAILABLE = [
  'no_covariate_metric', 'covariate_metric_not_found', 'no_control', 'insufficient_data', 'no_covariate_variance',
  /** a metric naming a quantile definition */
  'not_defined_for_quantiles',
] as const;
export type CupedUnavailable = (typeof CUPED_UNAVAILABLE)[number];

/** Distinct values an assignment-context attribute may have and still be diagnosed for SRM (and rolled up for it). */
export const CONTEXT_VALUES_LIMIT = 100;

/**
 * Why a method is not applied to a metric library definition's metric (MetricResult.definition): sequential testing,
 * the Bayesian analysis, the sample-size plan and CUPED take proportion, mean and ratio definitions; for quantiles
 * no always-valid, Bayesian, power or variance-reduction method is defined here.
 */
export const DEFINITION_UNAVAILABLE = ['not_defined_for_quantiles'] as const;
export type DefinitionUnavailable = (typeof DEFINITION_UNAVAILABLE)[number];
/** Why a definition metric's comparison has no interval or test (the src/stats degenerate reasons). */
export const COMPARISON_UNAVAILABLE = ['invalid_input', 'insufficient_data', 'zero_variance', 'overflow'] as const;
