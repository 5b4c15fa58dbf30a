/**
 * CUPED variance reduction of conversion metrics (src/stats/cuped.ts): the covariate is each user's pre-exposure
 * history of the metric named by variance_reduction_config.covariate_metric_id; stored correction and level apply.
 */
import { adjust, cupedCompare, type CupedStats } from '../stats/index.js';
import type { ExperimentSettings } from './types.js';
import { alphaFor, finite } from './compare.js';
import type { CupedSums } from './types.js';
import { controlOf, type Metric, type Variant } from './snapshot.js';
import type { CupedUnavailable } from './domain.js';
import type { CupedResult } from './model.js';


export type CupedComparison = CupedResult['metrics'][number]['comparisons'][number];
export type CupedMetric = CupedResult['metrics'][number];

/** The covariate metric named by the experiment's config, or why there is none. */
export function covariateOf(e: ExperimentSettings): { metric: Metric } | { reason: CupedUnavailable } {
  const id = (e.variance_reduction_config as { covariate_metric_id?: string | null } | null)?.covariate_metric_id;
  if (!id) return { reason: 'no_covariate_metric' };
  const metric = e.metrics.find((m) => m.id === id);
  return metric ? { metric } : { reason: 'covariate_metric_not_found' };
}

const statsOf = (s: CupedSums | undefined): CupedStats => ({
  n: s?.users ?? 0, sumY: s?.converters ?? 0, sumY2: s?.converters ?? 0, sumX: s?.sumX ?? 0, sumX2: s?.sumX2 ?? 0, sumXY: s?.sumXY ?? 0,
});

/**
 * Each treatment of one metric against the control, or the reason it cannot be computed (`reason` given: for the
 * whole metric); `compare` computes a treatment from the control (the fields of `none` it can fill). corrected_p_value
 * adjusts the computable treatments' p-values together with the stored correction.
 */
export function cupedComparisons(
  e: ExperimentSettings, metric: Metric, reason: CupedUnavailable | null,
  compare: (control: Variant, treatment: Variant, none: CupedComparison) => CupedComparison,
): CupedMetric {
  const control = controlOf(e);
  const comparisons: CupedComparison[] = e.variants.filter((v) => !v.is_control).map((v) => {
    const none: CupedComparison = {
      variant_id: v.id, variant_name: v.name, adjusted_effect: null, unadjusted_effect: null, confidence_interval: null,
      variance_reduction: null, share_with_history: null, theta: null, p_value: null, corrected_p_value: null, is_significant: false,
      unavailable_reason: reason ?? (control ? null : 'no_control'),
    };
    return none.unavailable_reason ? none : compare(control!, v, none);
  });
  const computed = comparisons.filter((x) => x.p_value !== null);
  const corrected = adjust(computed.map((x) => x.p_value as number), e.correction_method);
  const alpha = alphaFor(e.confidence_level);
  computed.forEach((x, i) => {
    x.corrected_p_value = corrected[i];
    x.is_significant = corrected[i] < alpha;
  });
  return { metric_id: metric.id, metric_name: metric.name, comparisons };
}

/** A cupedCompare result in the route's terms (share: of the two arms' users with pre-exposure history). */
export function fromCupedCompare(none: CupedComparison, result: ReturnType<typeof cupedCompare>, share: number | null): CupedComparison {
  if (!result || result.test.reason === 'insufficient_data' || result.test.reason === 'invalid_input') {
    return { ...none, share_with_history: share, unavailable_reason: 'insufficient_data' };
  }
  if (result.reason === 'no_covariate_variance') return { ...none, share_with_history: share, unavailable_reason: 'no_covariate_variance' };
  const lower = finite(result.test.ci_lower);
  const upper = finite(result.test.ci_upper);
  return {
    ...none,
    adjusted_effect: finite(result.test.difference),
    unadjusted_effect: finite(result.unadjusted_test.difference),
    confidence_interval: lower === null || upper === null ? null : { lower, upper },
    variance_reduction: finite(result.variance_reduction),
    share_with_history: share,
    theta: finite(result.theta),
    p_value: finite(result.test.p_value),
  };
}

/** Each treatment of one conversion metric against the control (cupedComparisons), from the per-variant CUPED sums. */
export function cupedMetric(e: ExperimentSettings, metric: Metric, sums: CupedSums[], reason: CupedUnavailable | null): CupedMetric {
  const byVariant = new Map(sums.map((s) => [s.variantId, s]));
  return cupedComparisons(e, metric, reason, (control, v, none) => {
    const c = byVariant.get(control.id);
    const t = byVariant.get(v.id);
    const users = (c?.users ?? 0) + (t?.users ?? 0);
    const share = users > 0 ? ((c?.withHistory ?? 0) + (t?.withHistory ?? 0)) / users : null;
    return fromCupedCompare(none, cupedCompare(statsOf(c), statsOf(t), e.confidence_level), share);
  });
}
