/**
 * Ratio metrics by the delta method (Deng, Knoblich & Lu, "Applying the Delta Method in Metric Analytics", KDD 2018;
 * the same estimator as GrowthBook's and Statsig's ratio metrics). Per user i of a variant: numerator x_i and
 * denominator y_i (each a per-user aggregate of an event: a count or a sum of values). From the variant's sufficient
 * statistics {n, sum_x, sum_y, sum_x2, sum_y2, sum_xy}:
 *
 *   R      = sum_x / sum_y = x̄ / ȳ                               (ratio of means)
 *   s_x², s_y², s_xy                                              (sample variances / covariance, n − 1)
 *   Var(R) = (s_x² − 2R·s_xy + R²·s_y²) / (n·ȳ²)                   (first-order Taylor expansion of x̄/ȳ)
 *
 * Between control c and treatment t, with v_c = Var(R_c), v_t = Var(R_t):
 *   Δ   = R_t − R_c,  se = √(v_c + v_t),  T = Δ/se
 *   df  = (v_c + v_t)² / (v_c²/(n_c − 1) + v_t²/(n_t − 1))          (Welch–Satterthwaite on the delta variances)
 *   p   = P(|T_df| ≥ |T|),  CI(Δ) = Δ ± t_{df,1−(1−level)/2}·se
 *   L   = R_t/R_c − 1,  se_L = √(v_t/R_c² + R_t²·v_c/R_c⁴),  CI(L) = L ± t_{df,1−(1−level)/2}·se_L
 *
 * With y ≡ 1 (sum_y = sum_y2 = n, sum_xy = sum_x) this is exactly Welch's test of the means (a tested property).
 *
 * Degenerate cases never throw and never return NaN/Infinity (p_value 1 whenever the test cannot be made):
 *   - invalid statistics (non-finite, n not a count, negative sums of squares)    -> 'invalid_input', arms null
 *   - an arm with n = 0 or sum_y = 0 (no denominator, ratio undefined)            -> 'insufficient_data'
 *   - an arm with n = 1 (no variance)                                             -> 'insufficient_data', ratios set
 *   - both delta variances 0                                                      -> 'zero_variance'
 *   - R_c = 0: the relative lift and its interval are null
 */
import { studentTQuantile, studentTTwoSidedP } from './distributions.js';
import { finiteOrNull, isCount, isOpenUnit, satterthwaiteDf, symmetricInterval } from './numeric.js';

/** Sufficient statistics of one variant: x the per-user numerator, y the per-user denominator. */
export interface RatioStats {
  n: number;
  sum_x: number;
  sum_y: number;
  sum_x2: number;
  sum_y2: number;
  sum_xy: number;
}

export interface RatioArm {
  n: number;
  mean_x: number;
  mean_y: number;
  /** sum_x / sum_y; null when sum_y = 0 */
  ratio: number | null;
  /** delta-method variance of the ratio; null when n < 2 or the ratio is undefined */
  variance: number | null;
}

export type RatioDegenerateReason = 'invalid_input' | 'insufficient_data' | 'zero_variance' | 'overflow';

export interface RatioComparison {
  control: RatioArm | null;
  treatment: RatioArm | null;
  /** R_t − R_c */
  difference: number | null;
  std_error: number | null;
  t: number | null;
  df: number | null;
  p_value: number;
  ci_lower: number | null;
  ci_upper: number | null;
  /** R_t / R_c − 1 */
  relative_lift: number | null;
  relative_std_error: number | null;
  relative_ci_lower: number | null;
  relative_ci_upper: number | null;
  confidence_level: number | null;
  reason: RatioDegenerateReason | null;
}

function validStats(s: RatioStats): boolean {
  return (
    isCount(s.n) &&
    [s.sum_x, s.sum_y, s.sum_x2, s.sum_y2, s.sum_xy].every(Number.isFinite) &&
    s.sum_x2 >= 0 &&
    s.sum_y2 >= 0
  );
}

/**
 * One variant's ratio and its delta-method variance; null on invalid input. Centred sums that rounding made negative
 * are clamped at 0 and the covariance to the Cauchy–Schwarz bound (as in CUPED).
 */
export function ratioArm(s: RatioStats): RatioArm | null {
  if (!validStats(s)) return null;
  if (s.n === 0) return { n: 0, mean_x: 0, mean_y: 0, ratio: null, variance: null };
  const meanX = s.sum_x / s.n;
  const meanY = s.sum_y / s.n;
  const ratio = s.sum_y === 0 ? null : finiteOrNull(s.sum_x / s.sum_y);
  if (ratio === null || s.n < 2) return { n: s.n, mean_x: meanX, mean_y: meanY, ratio, variance: null };
  const sxx = Math.max(0, s.sum_x2 - s.sum_x * meanX);
  const syy = Math.max(0, s.sum_y2 - s.sum_y * meanY);
  const bound = Math.sqrt(sxx * syy);
  const sxy = Math.min(bound, Math.max(-bound, s.sum_xy - s.sum_x * meanY));
  // (s_x² − 2R s_xy + R² s_y²)/(n ȳ²) with the (n − 1) of each sample moment taken out once.
  const numerator = Math.max(0, sxx - 2 * ratio * sxy + ratio * ratio * syy);
  const variance = finiteOrNull(numerator / (s.n - 1) / s.n / (meanY * meanY));
  return { n: s.n, mean_x: meanX, mean_y: meanY, ratio, variance };
}

/** Delta-method comparison of two ratio metrics (treatment vs control); confidenceLevel in (0, 1), else no intervals. */
export function compareRatios(control: RatioStats, treatment: RatioStats, confidenceLevel = 0.95): RatioComparison {
  const base: RatioComparison = {
    control: null,
    treatment: null,
    difference: null,
    std_error: null,
    t: null,
    df: null,
    p_value: 1,
    ci_lower: null,
    ci_upper: null,
    relative_lift: null,
    relative_std_error: null,
    relative_ci_lower: null,
    relative_ci_upper: null,
    confidence_level: isOpenUnit(confidenceLevel) ? confidenceLevel : null,
    reason: null,
  };
  const c = ratioArm(control);
  const t = ratioArm(treatment);
  if (c === null || t === null) return { ...base, reason: 'invalid_input' };
  const withArms = { ...base, control: c, treatment: t };
  if (c.ratio === null || t.ratio === null) return { ...withArms, reason: 'insufficient_data' };
  const difference = finiteOrNull(t.ratio - c.ratio);
  if (difference === null) return { ...withArms, reason: 'overflow' };
  const relative = c.ratio === 0 ? null : finiteOrNull(t.ratio / c.ratio - 1);
  const withLift = { ...withArms, difference, relative_lift: relative };
  if (c.variance === null || t.variance === null) return { ...withLift, reason: 'insufficient_data' };
  const se2 = c.variance + t.variance;
  if (se2 === 0) return { ...withLift, reason: 'zero_variance' };
  const se = Math.sqrt(se2);
  const stat = difference / se;
  if (!Number.isFinite(se) || !Number.isFinite(stat)) return { ...withLift, reason: 'overflow' };
  const df = satterthwaiteDf(c.variance, c.n, t.variance, t.n);
  const p = studentTTwoSidedP(stat, df);
  const result: RatioComparison = { ...withLift, std_error: se, t: stat, df, p_value: Number.isNaN(p) ? 1 : p };
  if (relative !== null) {
    const rc = c.ratio;
    const seRel = finiteOrNull(Math.sqrt(t.variance / (rc * rc) + (t.ratio * t.ratio * c.variance) / (rc * rc * rc * rc)));
    result.relative_std_error = seRel;
  }
  if (isOpenUnit(confidenceLevel)) {
    const q = studentTQuantile(1 - (1 - confidenceLevel) / 2, df);
    [result.ci_lower, result.ci_upper] = symmetricInterval(difference, q * se);
    if (relative !== null && result.relative_std_error !== null) {
      [result.relative_ci_lower, result.relative_ci_upper] = symmetricInterval(relative, q * result.relative_std_error);
    }
  }
  return result;
}
