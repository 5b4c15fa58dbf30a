/**
 * Treatment-versus-control comparisons of one metric (docs/statistics.md, "Results"): Fisher's exact test on
 * converters for conversion metrics, Welch's t-test on per-user totals for the others, corrected over every
 * treatment of the metric.
 */
import { adjust, compareProportions, finiteOrNull, fisherExactTwoSided, summaryFromSums, welchTTest, type SampleSummary } from '../stats/index.js';
import type { CorrectionMethod } from './domain.js';
import type { ArmTotals, Variant } from './snapshot.js';
import { totalsOf } from './snapshot.js';
import type { VariantResult } from './model.js';

export type MetricKind = 'conversion' | 'count' | 'value';

/** conversion: converted or not; count: events per user; revenue and duration: value per user. */
export function metricKind(metricType: string): MetricKind {
  if (metricType === 'conversion') return 'conversion';
  return metricType === 'count' ? 'count' : 'value';
}

export const TEST_OF: Record<MetricKind, 'fisher_exact' | 'welch_t'> = { conversion: 'fisher_exact', count: 'welch_t', value: 'welch_t' };

/** The value if finite, else null: nothing NaN or infinite reaches JSON (the stats package's guard, by its short name here). */
export const finite = finiteOrNull;

/** alpha = 1 - level, rounded so that 0.95 gives 0.05 rather than its binary neighbour. */
export const alphaFor = (confidenceLevel: number) => Math.round((1 - confidenceLevel) * 1e12) / 1e12;

export interface Interval {
  lower: number;
  upper: number;
}

export interface ArmComparison {
  p_value: number;
  relative_lift: number | null;
  /** of the relative lift, at the confidence level */
  confidence_interval: Interval | null;
}

/** n, mean and variance of the per-user outcome of a metric in one arm (users without events count 0). */
export function armSummary(kind: MetricKind, t: ArmTotals): SampleSummary {
  if (kind === 'conversion') return summaryFromSums(t.users, t.converters, t.converters);
  if (kind === 'count') return summaryFromSums(t.users, t.eventCount, t.countSquares);
  return summaryFromSums(t.users, t.valueSum, t.valueSquares);
}

export const meanOf = (kind: MetricKind, t: ArmTotals): number | null => (t.users > 0 ? finite(armSummary(kind, t).mean) : null);

const interval = (lower: number | null | undefined, upper: number | null | undefined): Interval | null => {
  const lo = finite(lower);
  const hi = finite(upper);
  return lo === null || hi === null ? null : { lower: lo, upper: hi };
};

/**
 * One treatment against the control. Conversion: Fisher's exact p-value, relative lift with the delta-method interval
 * of compareProportions. Others: Welch's p-value, relative lift with the Welch interval of the difference divided by
 * the control mean.
 */
export function compareArms(kind: MetricKind, control: ArmTotals, treatment: ArmTotals, confidenceLevel: number): ArmComparison {
  if (kind === 'conversion') {
    const p = fisherExactTwoSided(control.converters, control.users, treatment.converters, treatment.users) ?? 1;
    const c = compareProportions(control.converters, control.users, treatment.converters, treatment.users, confidenceLevel);
    return { p_value: p, relative_lift: finite(c?.relative_lift), confidence_interval: interval(c?.relative_ci?.[0], c?.relative_ci?.[1]) };
  }
  const sc = armSummary(kind, control);
  const st = armSummary(kind, treatment);
  const w = welchTTest(sc, st, confidenceLevel);
  if (!(sc.n > 0 && st.n > 0 && sc.mean !== 0)) return { p_value: w.p_value, relative_lift: null, confidence_interval: null };
  const lift = finite(st.mean / sc.mean - 1);
  const scale = Math.abs(sc.mean);
  return {
    p_value: w.p_value,
    relative_lift: lift,
    confidence_interval: w.ci_lower === null || w.ci_upper === null ? null : interval(w.ci_lower / scale, w.ci_upper / scale),
  };
}

export type { VariantResult };

/**
 * Every variant's numbers for one metric. Raw p-values of all treatments are adjusted together with the method;
 * a treatment is significant when its adjusted p-value is below alpha. The control carries no test. Without a
 * control nothing is tested.
 */
export function variantResults(
  kind: MetricKind,
  variants: readonly Variant[],
  totals: Map<string, ArmTotals>,
  method: CorrectionMethod,
  confidenceLevel: number,
): VariantResult[] {
  const control = variants.find((v) => v.is_control);
  const controlTotals = control ? totalsOf(totals, control.id) : undefined;
  const comparisons = new Map<string, ArmComparison>();
  if (controlTotals) {
    for (const v of variants) {
      if (!v.is_control) comparisons.set(v.id, compareArms(kind, controlTotals, totalsOf(totals, v.id), confidenceLevel));
    }
  }
  const tested = [...comparisons.keys()];
  const adjusted = new Map(adjust(tested.map((id) => comparisons.get(id)!.p_value), method).map((p, i) => [tested[i], p]));
  const alpha = alphaFor(confidenceLevel);
  return variants.map((v) => {
    const t = totalsOf(totals, v.id);
    const c = comparisons.get(v.id);
    const adjustedP = adjusted.get(v.id) ?? null;
    return {
      variant_id: v.id,
      variant_name: v.name,
      is_control: v.is_control,
      sample_size: t.users,
      conversions: t.converters,
      mean: meanOf(kind, t),
      p_value: c ? finite(c.p_value) : null,
      adjusted_p_value: finite(adjustedP),
      is_significant: adjustedP !== null && adjustedP < alpha,
      relative_lift: c?.relative_lift ?? null,
      confidence_interval: c?.confidence_interval ?? null,
    };
  });
}
