/**
 * CUPED for ratio metrics by the delta method (Deng, Knoblich & Lu, "Applying the Delta Method in Metric Analytics",
 * KDD 2018, section 3.3: regression adjustment of a ratio through its linearisation). Per user i of an arm: numerator
 * x_i, denominator y_i, pre-exposure covariate c_i. With R = x̄/ȳ the ratio of means and the centred sums S (n − 1 taken
 * out once), the ratio's first-order linearisation l_i = (x_i − R·y_i)/ȳ has
 *
 *   S_ll = (S_xx − 2R·S_xy + R²·S_yy)/ȳ²,   S_lc = (S_xc − R·S_yc)/ȳ
 *   θ    = Σ_arms S_lc / Σ_arms S_cc                          (pooled within-arm slope, as CUPED for means)
 *   R_adj = R − θ(c̄ − c̄_pooled)
 *   Var(R_adj) = (S_ll − 2θ·S_lc + θ²·S_cc) / ((n − 1)·n)      (Var(R) = S_ll/((n − 1)·n), the delta method's)
 *
 * Between control and treatment: Δ = R_adj,t − R_adj,c, se = √(v_c + v_t), T = Δ/se with the Welch–Satterthwaite df on
 * the adjusted variances, p = P(|T_df| ≥ |T|), CI = Δ ± t·se (as compareRatios); variance_reduction =
 * 1 − (v_c,adj + v_t,adj)/(v_c + v_t). Without covariate variance θ = 0 and reason 'no_covariate_variance'.
 * Never throws, never NaN: invalid sums → null; a zero denominator sum or n < 2 in an arm → reason 'insufficient_data'.
 */
import { studentTQuantile, studentTTwoSidedP } from './distributions.js';
import { finiteOrNull, isCount, isOpenUnit, satterthwaiteDf, symmetricInterval } from './numeric.js';

/** One arm's sufficient statistics: numerator x, denominator y, covariate c. */
export interface RatioCupedStats {
  n: number;
  sum_x: number; sum_y: number; sum_c: number;
  sum_x2: number; sum_y2: number; sum_c2: number;
  sum_xy: number; sum_xc: number; sum_yc: number;
}

export interface RatioCupedResult {
  theta: number | null;
  adjusted_difference: number | null;
  unadjusted_difference: number | null;
  std_error: number | null;
  df: number | null;
  p_value: number | null;
  ci_lower: number | null;
  ci_upper: number | null;
  variance_reduction: number | null;
  reason: 'insufficient_data' | 'no_covariate_variance' | 'zero_variance' | null;
}

interface Arm { n: number; ratio: number; meanC: number; sll: number; slc: number; scc: number }

function arm(s: RatioCupedStats): Arm | null | 'insufficient' {
  const sums = [s.sum_x, s.sum_y, s.sum_c, s.sum_x2, s.sum_y2, s.sum_c2, s.sum_xy, s.sum_xc, s.sum_yc];
  if (!isCount(s.n) || !sums.every(Number.isFinite) || s.sum_x2 < 0 || s.sum_y2 < 0 || s.sum_c2 < 0) return null;
  if (s.n < 2 || s.sum_y === 0) return 'insufficient';
  const n = s.n;
  const mx = s.sum_x / n;
  const my = s.sum_y / n;
  const mc = s.sum_c / n;
  const ratio = s.sum_x / s.sum_y;
  const sxx = Math.max(0, s.sum_x2 - s.sum_x * mx);
  const syy = Math.max(0, s.sum_y2 - s.sum_y * my);
  const scc = Math.max(0, s.sum_c2 - s.sum_c * mc);
  const sxy = s.sum_xy - s.sum_x * my;
  const sxc = s.sum_xc - s.sum_x * mc;
  const syc = s.sum_yc - s.sum_y * mc;
  const sll = Math.max(0, (sxx - 2 * ratio * sxy + ratio * ratio * syy) / (my * my));
  // Cauchy–Schwarz keeps rounding from giving an impossible covariance of l and c.
  const bound = Math.sqrt(sll * scc);
  const slc = Math.min(bound, Math.max(-bound, (sxc - ratio * syc) / my));
  const out = { n, ratio, meanC: mc, sll, slc, scc };
  return Object.values(out).every(Number.isFinite) ? out : null;
}

/** CUPED-adjusted delta-method comparison of two ratio metrics; null on invalid input. */
export function cupedCompareRatios(control: RatioCupedStats, treatment: RatioCupedStats, confidenceLevel = 0.95): RatioCupedResult | null {
  const c = arm(control);
  const t = arm(treatment);
  if (c === null || t === null) return null;
  const none: RatioCupedResult = {
    theta: null, adjusted_difference: null, unadjusted_difference: null, std_error: null, df: null, p_value: null,
    ci_lower: null, ci_upper: null, variance_reduction: null, reason: 'insufficient_data',
  };
  if (c === 'insufficient' || t === 'insufficient') return none;
  const sccPooled = c.scc + t.scc;
  const theta = sccPooled > 0 ? (c.slc + t.slc) / sccPooled : 0;
  const grandC = (control.sum_c + treatment.sum_c) / (control.n + treatment.n);
  const adjusted = (a: Arm) => a.ratio - theta * (a.meanC - grandC);
  const variance = (a: Arm, th: number) => Math.max(0, a.sll - 2 * th * a.slc + th * th * a.scc) / (a.n - 1) / a.n;
  const vc = variance(c, theta);
  const vt = variance(t, theta);
  const before = variance(c, 0) + variance(t, 0);
  const difference = finiteOrNull(adjusted(t) - adjusted(c));
  const base: RatioCupedResult = {
    ...none,
    theta: finiteOrNull(theta),
    adjusted_difference: difference,
    unadjusted_difference: finiteOrNull(t.ratio - c.ratio),
    variance_reduction: before > 0 ? finiteOrNull(1 - (vc + vt) / before) : null,
    reason: sccPooled > 0 ? null : 'no_covariate_variance',
  };
  const se = Math.sqrt(vc + vt);
  if (difference === null || !Number.isFinite(se)) return { ...base, reason: 'insufficient_data' };
  if (se === 0) return { ...base, reason: 'zero_variance' };
  const df = satterthwaiteDf(vc, c.n, vt, t.n);
  const p = studentTTwoSidedP(difference / se, df);
  const [lower, upper] = isOpenUnit(confidenceLevel)
    ? symmetricInterval(difference, studentTQuantile(1 - (1 - confidenceLevel) / 2, df) * se)
    : [null, null];
  return { ...base, std_error: se, df, p_value: Number.isNaN(p) ? 1 : p, ci_lower: lower, ci_upper: upper };
}
