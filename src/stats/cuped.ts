/**
 * CUPED (Deng, Xu, Kohavi & Walker 2013) regression adjustment from per-variant sufficient
 * statistics of the metric y and its pre-experiment covariate x.
 *
 * Within each arm v (centred sums):
 *   Sxx_v = sum x^2 - (sum x)^2/n,  Syy_v = sum y^2 - (sum y)^2/n,  Sxy_v = sum xy - sum x sum y / n
 * Pooled within-arm slope (the ANCOVA slope; treatment cannot leak into it):
 *   theta = sum_v Sxy_v / sum_v Sxx_v
 * Adjusted arm mean (x centred at the grand mean of x over all arms, so the adjustment has
 * zero expectation):
 *   ybar_adj_v = ybar_v - theta (xbar_v - xbar)
 * Adjusted within-arm variance, the sample variance of y - theta x:
 *   s2_adj_v = (Syy_v - 2 theta Sxy_v + theta^2 Sxx_v) / (n_v - 1)
 * The treatment effect is then tested with Welch's t-test on (n_v, ybar_adj_v, s2_adj_v).
 * variance_reduction = 1 - Var_adj(difference) / Var_unadj(difference), in (-inf, 1]
 * (it can be slightly negative in small samples, since theta is estimated).
 *
 * Degenerate conventions: invalid input (non-finite sums, n < 0 or > 2^53, or sums so extreme that the
 * centred moments or theta overflow) -> null. When the pooled x
 * variance is 0 (constant or missing covariate), theta = 0 (no adjustment) and reason =
 * 'no_covariate_variance'. Rounding in the centred sums is clamped at 0. variance_reduction is
 * null when the unadjusted variance is 0 or an arm has n < 2.
 */
import { welchTTest, type WelchResult } from './welch.js';

export interface CupedStats {
  n: number;
  sumY: number;
  sumY2: number;
  sumX: number;
  sumX2: number;
  sumXY: number;
}

export interface CupedArm {
  n: number;
  mean_y: number;
  mean_x: number;
  adjusted_mean: number;
  /** sample variance of y */
  variance: number;
  /** sample variance of y - theta x */
  adjusted_variance: number;
}

export interface CupedResult {
  theta: number;
  control: CupedArm;
  treatment: CupedArm;
  /** 1 - adjusted / unadjusted variance of the difference in means; null if not defined */
  variance_reduction: number | null;
  /** Welch test on the adjusted means */
  test: WelchResult;
  /** unadjusted Welch test, for reference */
  unadjusted_test: WelchResult;
  reason: 'no_covariate_variance' | null;
}

interface Centred {
  n: number;
  meanY: number;
  meanX: number;
  sxx: number;
  syy: number;
  sxy: number;
}

function valid(s: CupedStats): boolean {
  return (
    [s.n, s.sumY, s.sumY2, s.sumX, s.sumX2, s.sumXY].every(Number.isFinite) &&
    s.n >= 0 &&
    s.n <= Number.MAX_SAFE_INTEGER &&
    s.sumY2 >= 0 &&
    s.sumX2 >= 0
  );
}

function centre(s: CupedStats): Centred | null {
  if (!(s.n > 0)) return { n: s.n, meanY: 0, meanX: 0, sxx: 0, syy: 0, sxy: 0 };
  const meanY = s.sumY / s.n;
  const meanX = s.sumX / s.n;
  const sxx = Math.max(0, s.sumX2 - s.sumX * meanX);
  const syy = Math.max(0, s.sumY2 - s.sumY * meanY);
  // Cauchy–Schwarz bound keeps rounding from producing an impossible covariance.
  const bound = Math.sqrt(sxx * syy);
  const sxy = Math.min(bound, Math.max(-bound, s.sumXY - s.sumX * meanY));
  const c = { n: s.n, meanY, meanX, sxx, syy, sxy };
  // Sums so large (or n so small) that the centred moments overflow are treated as invalid.
  return [meanY, meanX, sxx, syy, sxy, bound].every(Number.isFinite) ? c : null;
}

/** Pooled within-arm theta = sum Sxy / sum Sxx; 0 when the covariate has no variance; null on invalid input. */
export function cupedTheta(groups: readonly CupedStats[]): number | null {
  if (!groups.every(valid)) return null;
  let sxx = 0;
  let sxy = 0;
  for (const g of groups) {
    const c = centre(g);
    if (c === null) return null;
    sxx += c.sxx;
    sxy += c.sxy;
  }
  const theta = sxx > 0 ? sxy / sxx : 0;
  return Number.isFinite(theta) ? theta : null;
}

/** CUPED-adjusted comparison of treatment vs control; null on invalid input. */
export function cupedCompare(control: CupedStats, treatment: CupedStats, confidenceLevel = 0.95): CupedResult | null {
  if (!valid(control) || !valid(treatment)) return null;
  const theta = cupedTheta([control, treatment]);
  const c = centre(control);
  const t = centre(treatment);
  if (theta === null || c === null || t === null) return null;
  const nTotal = control.n + treatment.n;
  const grandX = nTotal > 0 ? (control.sumX + treatment.sumX) / nTotal : 0;
  const arm = (a: Centred): CupedArm => {
    const variance = a.n >= 2 ? a.syy / (a.n - 1) : 0;
    const adjSs = Math.max(0, a.syy - 2 * theta * a.sxy + theta * theta * a.sxx);
    const adjusted = a.n >= 2 ? adjSs / (a.n - 1) : 0;
    const adjustedMean = a.meanY - theta * (a.meanX - grandX);
    return {
      n: a.n,
      mean_y: a.meanY,
      mean_x: a.meanX,
      adjusted_mean: Number.isFinite(adjustedMean) ? adjustedMean : a.meanY,
      variance: Number.isFinite(variance) ? variance : 0,
      adjusted_variance: Number.isFinite(adjusted) ? adjusted : 0,
    };
  };
  const ac = arm(c);
  const at = arm(t);
  const test = welchTTest(
    { n: ac.n, mean: ac.adjusted_mean, variance: ac.adjusted_variance },
    { n: at.n, mean: at.adjusted_mean, variance: at.adjusted_variance },
    confidenceLevel,
  );
  const unadjusted = welchTTest(
    { n: ac.n, mean: ac.mean_y, variance: ac.variance },
    { n: at.n, mean: at.mean_y, variance: at.variance },
    confidenceLevel,
  );
  let variance_reduction: number | null = null;
  if (ac.n >= 2 && at.n >= 2) {
    const before = ac.variance / ac.n + at.variance / at.n;
    const after = ac.adjusted_variance / ac.n + at.adjusted_variance / at.n;
    if (before > 0 && Number.isFinite(before) && Number.isFinite(after)) variance_reduction = 1 - after / before;
  }
  return {
    theta,
    control: ac,
    treatment: at,
    variance_reduction,
    test,
    unadjusted_test: unadjusted,
    reason: c.sxx + t.sxx > 0 ? null : 'no_covariate_variance',
  };
}
