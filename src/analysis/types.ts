/**
 * The analysis package's input: an experiment's settings and its per-arm sufficient statistics, as numbers. The
 * results store reads the statistics into these shapes (by the counting rule of tracking/counting.ts); nothing here
 * knows where they came from.
 */
import type { BayesianConfig, BayesianDecision, CorrectionMethod } from './domain.js';

/** An experiment as the analysis reads it: its arms, metrics and statistical settings (names as in the payloads). */
export interface ExperimentSettings {
  id: string;
  name: string;
  experiment_type: string;
  correction_method: CorrectionMethod;
  confidence_level: number;
  sequential_testing_enabled: boolean;
  sequential_testing_config: { alpha?: number } | null;
  variance_reduction_config: { covariate_metric_id?: string | null } | null;
  bayesian_enabled: boolean;
  bayesian_config: BayesianConfig | null;
  bayesian_decision: BayesianDecision | null;
  /** Variants in created order (the control among them). */
  variants: Array<{ id: string; name: string; is_control: boolean; traffic_allocation: number }>;
  metrics: Array<{
    id: string; name: string; event_name: string; metric_type: string; is_primary: boolean;
    expected_effect: number | null;
    /** A metric library definition the metric names: results analyse it per the definition. */
    metric_definition_id?: string | null;
  }>;
}

/** Assigned users of a variant on one UTC day (YYYY-MM-DD). */
export interface AssignmentDay {
  variantId: string;
  day: string;
  users: number;
}

/** What one UTC day added to a variant's sufficient statistics for one metric (see result_variant_days). */
export interface MetricDay {
  variantId: string;
  day: string;
  converters: number;
  eventCount: number;
  countSquares: number;
  valueSum: number;
  valueSquares: number;
}

/** Assigned users per context attribute value and variant (for the SRM diagnosis). */
export interface ContextCount {
  attribute: string;
  value: string;
  variantId: string;
  users: number;
}

/** Per-variant sufficient statistics of one group of users (an arm, a segment value, or an interaction cell). */
export interface GroupStats {
  users: number;
  converters: number;
  eventCount: number;
  countSquares: number;
  valueSum: number;
  valueSquares: number;
}

/** A metric's statistics for one value of an assignment-context attribute and one variant. */
export interface SegmentStats extends GroupStats {
  segment: string | null;
  variantId: string;
}

/** Per-variant sums for CUPED on a conversion metric: y = converted (0/1), x = the pre-exposure covariate. */
export interface CupedSums {
  variantId: string;
  users: number;
  withHistory: number;
  converters: number;
  sumX: number;
  sumX2: number;
  sumXY: number;
}

/**
 * Per variant and UTC day, the assigned users and, per metric event name, the day deltas of the sufficient statistics,
 * without the users exposed to more than one variant (their assignments apart, for the sample-ratio check); assigned
 * users per context value for the SRM diagnosis. Small (variants x days x metrics rows, plus the context values) and
 * cached.
 */
export interface Snapshot {
  assignments: AssignmentDay[];
  metrics: Record<string, MetricDay[]>;
  /** Assignments of the excluded users, per variant and day (empty when none). */
  excludedAssignments?: AssignmentDay[];
  contexts?: { counts: ContextCount[]; overLimit: string[] };
}

/** A per-user aggregate of one event: the count of the user's counted events, or the sum of their values. */
export interface EventAggregate {
  event_name: string;
  aggregate: 'count' | 'sum';
}

/** What a metric library definition says to analyse (the metric-definitions module's fields), as of `version`. */
export interface DefinitionSettings {
  id: string;
  /** The definition's name (for what names the metric, e.g. a guardrail's notice); not part of the analysis. */
  name?: string;
  version: number;
  kind: 'proportion' | 'mean' | 'ratio' | 'quantile';
  /** proportion, mean, quantile: the per-user value (proportion: the count, converted when > 0). */
  value: EventAggregate | null;
  /** ratio: numerator and denominator. */
  numerator: EventAggregate | null;
  denominator: EventAggregate | null;
  /** quantile: p in (0, 1). */
  quantile: number | null;
  capping: { type: 'none' } | { type: 'absolute'; value: number } | { type: 'percentile'; p: number };
}

/**
 * Per-user values of a definition's aggregates in one variant, by the counting rule: `users` analysed users (assigned,
 * less those with a conflicting exposure) and, for the users with at least one counted event of any of the
 * aggregates, one row of values in the order the aggregates were asked for. Users without a row have 0 for each.
 */
export interface VariantUserValues {
  variantId: string;
  users: number;
  rows: number[][];
}

/**
 * The same values in columns: `columns[i][k]` is aggregate i of the k-th user with an event (every column as long),
 * a compact form for many users (results' first computation).
 */
export interface VariantUserColumns {
  variantId: string;
  users: number;
  columns: Float64Array[];
}
