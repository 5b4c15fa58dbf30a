/**
 * The experiments module's domain vocabulary: the values an experiment's fields take and the shapes of its stored
 * settings. The table (db/schema/experiments.ts), this module and other modules (results, power, interactions, mutual
 * exclusion, export) import them from here, never from the table file.
 */
export const EXPERIMENT_TYPES = ['a_b', 'mv', 'split_url', 'bandit'] as const;
export type ExperimentType = (typeof EXPERIMENT_TYPES)[number];
export const EXPERIMENT_STATUSES = ['draft', 'active', 'paused', 'completed', 'archived'] as const;
export type ExperimentStatus = (typeof EXPERIMENT_STATUSES)[number];
export const CORRECTION_METHODS = ['none', 'bonferroni', 'benjamini_hochberg'] as const;
export type CorrectionMethod = (typeof CORRECTION_METHODS)[number];
export const METRIC_TYPES = ['conversion', 'count', 'revenue', 'duration'] as const;
export type MetricType = (typeof METRIC_TYPES)[number];
export const BAYESIAN_DECISIONS = ['CONTINUE', 'STOP_WINNER', 'STOP_EQUIVALENT', 'STOP_FUTILE'] as const;
export type BayesianDecision = (typeof BAYESIAN_DECISIONS)[number];

export interface SequentialTestingConfig {
  alpha: number;
}
export interface BayesianConfig {
  prior_family: string;
  alpha: number;
  beta: number;
  loss_threshold: number;
  rope: number;
  credible_level: number;
}
export interface VarianceReductionConfig {
  covariate_metric_id?: string | null;
}

/** The settings an experiment gets when it turns sequential testing or Bayesian analysis on without its own. */
export const SEQUENTIAL_DEFAULTS: SequentialTestingConfig = { alpha: 0.05 };
export const BAYESIAN_DEFAULTS: BayesianConfig = {
  prior_family: 'beta',
  alpha: 1,
  beta: 1,
  loss_threshold: 0.01,
  rope: 0.01,
  credible_level: 0.95,
};
