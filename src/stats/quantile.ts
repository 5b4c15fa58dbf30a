/**
 * Quantile metrics: the p-th quantile of per-user values per variant, and the difference and relative difference
 * between two variants, by the asymptotic method of Deng, Knoblich & Lu ("Applying the Delta Method in Metric
 * Analytics", KDD 2018, section 4.3; the method GrowthBook uses for quantile metrics).
 *
 * Per variant with n values sorted X_(1) ≤ … ≤ X_(n) (1-based order statistics), z = z_{1−(1−level)/2}:
 *   q̂          = the p-th quantile by numpy's default linear method (see capping.ts)
 *   L = ⌊np − z√(np(1−p))⌋,  U = ⌈np + z√(np(1−p))⌉   (the ranks of the order-statistic interval of the quantile)
 *   σ̂(q̂)       = (X_(U) − X_(L)) / (2z)                  (the interval's width read as ±z standard errors)
 * Between control c and treatment t:
 *   Δ = q̂_t − q̂_c,  se = √(σ̂_c² + σ̂_t²),  Z = Δ/se,  p = 2(1 − Φ(|Z|)),  CI(Δ) = Δ ± z·se
 *   relative = q̂_t/q̂_c − 1,  se_rel = √(σ̂_t²/q̂_c² + q̂_t²σ̂_c²/q̂_c⁴) (delta method),  CI = relative ± z·se_rel
 *
 * The order-statistic form needs no density estimate and is valid for any continuous distribution; it needs
 * 1 ≤ L and U ≤ n, i.e. enough users for the tail asked about (p99 needs at least 390 users at 95 %): otherwise the arm's
 * std_error is null and the comparison says 'insufficient_data'. Ties make X_(U) = X_(L) possible (σ̂ = 0).
 * Degenerate cases never throw and never return NaN/Infinity; p_value is 1 whenever the test cannot be made.
 */
import { normalCdf, normalQuantile } from './distributions.js';
import { quantileOfSorted } from './capping.js';
import { finiteOrNull, isCount, isOpenUnit, symmetricInterval } from './numeric.js';

/** What the comparison needs of one variant (computable in SQL: a percentile_cont and two order statistics). */
export interface QuantileSummary {
  n: number;
  /** the p-th quantile q̂ */
  quantile: number;
  /** X_(L) and X_(U), the order statistics at the ranks quantileRanks gives; null when a rank is out of range */
  lower: number | null;
  upper: number | null;
}

export interface QuantileArm extends QuantileSummary {
  std_error: number | null;
}

export type QuantileDegenerateReason = 'invalid_input' | 'insufficient_data' | 'zero_variance' | 'overflow';

export interface QuantileComparison {
  control: QuantileArm | null;
  treatment: QuantileArm | null;
  difference: number | null;
  std_error: number | null;
  z: number | null;
  p_value: number;
  ci_lower: number | null;
  ci_upper: number | null;
  relative_difference: number | null;
  relative_std_error: number | null;
  relative_ci_lower: number | null;
  relative_ci_upper: number | null;
  quantile_p: number | null;
  confidence_level: number | null;
  reason: QuantileDegenerateReason | null;
}

/** The 1-based ranks L and U of the order-statistic interval; null when either falls outside 1..n or input is invalid. */
export function quantileRanks(n: number, p: number, confidenceLevel: number): { lower: number; upper: number } | null {
  if (!isCount(n) || n === 0 || !isOpenUnit(p) || !isOpenUnit(confidenceLevel)) return null;
  const z = normalQuantile(1 - (1 - confidenceLevel) / 2);
  const centre = n * p;
  const spread = z * Math.sqrt(n * p * (1 - p));
  const lower = Math.floor(centre - spread);
  const upper = Math.ceil(centre + spread);
  return lower >= 1 && upper <= n ? { lower, upper } : null;
}

/** One variant's summary from its per-user values; null for no values or invalid input. */
export function quantileSummary(values: readonly number[], p: number, confidenceLevel = 0.95): QuantileSummary | null {
  if (values.length === 0 || !values.every(Number.isFinite) || !isOpenUnit(p) || !isOpenUnit(confidenceLevel)) return null;
  return quantileSummaryOfSorted([...values].sort((a, b) => a - b), p, confidenceLevel);
}

/** As quantileSummary for finite values already sorted ascending (e.g. a sorted Float64Array); p and level not checked. */
export function quantileSummaryOfSorted(sorted: ArrayLike<number>, p: number, confidenceLevel: number): QuantileSummary {
  const ranks = quantileRanks(sorted.length, p, confidenceLevel);
  return {
    n: sorted.length,
    quantile: quantileOfSorted(sorted, p),
    lower: ranks ? sorted[ranks.lower - 1] : null,
    upper: ranks ? sorted[ranks.upper - 1] : null,
  };
}

function validSummary(s: QuantileSummary): boolean {
  return (
    isCount(s.n) &&
    s.n > 0 &&
    Number.isFinite(s.quantile) &&
    (s.lower === null || Number.isFinite(s.lower)) &&
    (s.upper === null || Number.isFinite(s.upper)) &&
    (s.lower === null || s.upper === null || s.lower <= s.upper)
  );
}

/** Compares the p-th quantiles of two variants (treatment vs control). */
export function compareQuantiles(
  control: QuantileSummary,
  treatment: QuantileSummary,
  p: number,
  confidenceLevel = 0.95,
): QuantileComparison {
  const base: QuantileComparison = {
    control: null,
    treatment: null,
    difference: null,
    std_error: null,
    z: null,
    p_value: 1,
    ci_lower: null,
    ci_upper: null,
    relative_difference: null,
    relative_std_error: null,
    relative_ci_lower: null,
    relative_ci_upper: null,
    quantile_p: isOpenUnit(p) ? p : null,
    confidence_level: isOpenUnit(confidenceLevel) ? confidenceLevel : null,
    reason: null,
  };
  if (!validSummary(control) || !validSummary(treatment) || !isOpenUnit(p) || !isOpenUnit(confidenceLevel)) {
    return { ...base, reason: 'invalid_input' };
  }
  const zq = normalQuantile(1 - (1 - confidenceLevel) / 2);
  const arm = (s: QuantileSummary): QuantileArm => ({
    n: s.n,
    quantile: s.quantile,
    lower: s.lower,
    upper: s.upper,
    std_error: s.lower === null || s.upper === null ? null : finiteOrNull((s.upper - s.lower) / (2 * zq)),
  });
  const c = arm(control);
  const t = arm(treatment);
  const difference = finiteOrNull(t.quantile - c.quantile);
  const relative = c.quantile === 0 ? null : finiteOrNull(t.quantile / c.quantile - 1);
  const withArms = { ...base, control: c, treatment: t, difference, relative_difference: relative };
  if (difference === null) return { ...withArms, reason: 'overflow' };
  if (c.std_error === null || t.std_error === null) return { ...withArms, reason: 'insufficient_data' };
  const se = Math.sqrt(c.std_error * c.std_error + t.std_error * t.std_error);
  if (!Number.isFinite(se)) return { ...withArms, reason: 'overflow' };
  if (se === 0) return { ...withArms, reason: 'zero_variance' };
  const z = difference / se;
  const pValue = 2 * normalCdf(-Math.abs(z));
  const [ciLower, ciUpper] = symmetricInterval(difference, zq * se);
  const result: QuantileComparison = {
    ...withArms,
    std_error: se,
    z,
    p_value: Number.isFinite(pValue) ? pValue : 1,
    ci_lower: ciLower,
    ci_upper: ciUpper,
  };
  if (relative !== null) {
    const qc = c.quantile;
    const seRel = finiteOrNull(
      Math.sqrt((t.std_error * t.std_error) / (qc * qc) + (t.quantile * t.quantile * c.std_error * c.std_error) / (qc * qc * qc * qc)),
    );
    result.relative_std_error = seRel;
    if (seRel !== null) [result.relative_ci_lower, result.relative_ci_upper] = symmetricInterval(relative, zq * seRel);
  }
  return result;
}
