/**
 * The experiments module's domain vocabulary: the values an experiment's fields take and the shapes of its stored
 * settings. The table (db/schema/experiments.ts), this module and other modules (results, power, interactions, mutual
 * exclusion, export) import them from here, never from the table file.
 */
/** Bus channel: an experiment changed (its id); caches of experiments and of their results listen. */
export const EXPERIMENTS_CHANGED = 'experiments.changed';
/** The 404 message for an unknown experiment id, wherever a module looks one up. */
export const EXPERIMENT_NOT_FOUND = 'Experiment not found';

export const EXPERIMENT_TYPES = ['a_b', 'mv', 'split_url', 'bandit'] as const;
export type ExperimentType = (typeof EXPERIMENT_TYPES)[number];
export const EXPERIMENT_STATUSES = ['draft', 'active', 'paused', 'completed', 'archived'] as const;
export type ExperimentStatus = (typeof EXPERIMENT_STATUSES)[number];
export const METRIC_TYPES = ['conversion', 'count', 'revenue', 'duration'] as const;
export type MetricType = (typeof METRIC_TYPES)[number];
// The statistical settings an experiment stores a choice among are the analysis package's vocabulary.
export {
  BAYESIAN_DECISIONS, BAYESIAN_DEFAULTS, CORRECTION_METHODS, type BayesianConfig, type BayesianDecision, type CorrectionMethod,
} from '../../analysis/domain.js';

export interface SequentialTestingConfig {
  alpha: number;
}
export interface VarianceReductionConfig {
  covariate_metric_id?: string | null;
}

/** The settings an experiment gets when it turns sequential testing on without its own (Bayesian: BAYESIAN_DEFAULTS). */
export const SEQUENTIAL_DEFAULTS: SequentialTestingConfig = { alpha: 0.05 };
