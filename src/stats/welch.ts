/**
 * Welch's unequal-variance t-test from sufficient statistics.
 *
 *   d   = mean_t - mean_c
 *   se  = sqrt(var_c/n_c + var_t/n_t)
 *   t   = d / se
 *   df  = se^4 / ((var_c/n_c)^2/(n_c-1) + (var_t/n_t)^2/(n_t-1))      (Welch–Satterthwaite)
 *   p   = P(|T_df| >= |t|)
 *   CI  = d ± t_{df, 1-(1-level)/2} * se
 *
 * Degenerate cases never throw and never return NaN/Infinity:
 *   - invalid input (non-finite values, n < 0 or > 2^53, variance < 0) -> reason 'invalid_input', p_value 1, all else null
 *   - an arm with n = 0                                        -> reason 'insufficient_data', p_value 1, difference null
 *   - an arm with n = 1 (variance not estimable)               -> reason 'insufficient_data', p_value 1, difference set
 *   - both variances zero (se = 0)                             -> reason 'zero_variance', p_value 1, difference set
 *   - intermediate overflow (astronomically large inputs)      -> reason 'overflow', p_value 1, difference if finite
 * p_value = 1 means "no evidence of a difference"; check `reason` to tell a degenerate
 * answer from a genuine one.
 */
import { studentTQuantile, studentTTwoSidedP } from './distributions.js';
import { finiteOrNull, isOpenUnit, satterthwaiteDf, symmetricInterval } from './numeric.js';

/** Sufficient statistics of one arm: size, sample mean and unbiased sample variance (n-1). */
export interface SampleSummary {
  n: number;
  mean: number;
  variance: number;
}

export type WelchDegenerateReason = 'invalid_input' | 'insufficient_data' | 'zero_variance' | 'overflow';

export interface WelchResult {
  /** mean_t - mean_c */
  difference: number | null;
  std_error: number | null;
  t: number | null;
  df: number | null;
  /** two-sided; 1 when the test is degenerate (see reason) */
  p_value: number;
  ci_lower: number | null;
  ci_upper: number | null;
  /** the requested level, or null when it was not inside (0, 1) (then the CI is null) */
  confidence_level: number | null;
  /** null for a regular result, else why the result is degenerate */
  reason: WelchDegenerateReason | null;
}

/** Summary from n, mean and standard deviation. */
export function summaryFromSd(n: number, mean: number, sd: number): SampleSummary {
  return { n, mean, variance: sd * sd };
}

/**
 * Summary from n, sum and sum of squares. n = 0 gives mean 0 / variance 0 and n = 1 gives
 * variance 0 (the test then reports 'insufficient_data'). Rounding can make the centred
 * sum of squares slightly negative; it is clamped at 0.
 */
export function summaryFromSums(n: number, sum: number, sumSquares: number): SampleSummary {
  if (!(n > 0)) return { n, mean: 0, variance: 0 };
  const mean = sum / n;
  if (n < 2) return { n, mean, variance: 0 };
  const centred = sumSquares - sum * mean;
  return { n, mean, variance: Math.max(0, centred) / (n - 1) };
}

function validSummary(s: SampleSummary): boolean {
  return (
    Number.isFinite(s.n) &&
    s.n >= 0 &&
    s.n <= Number.MAX_SAFE_INTEGER &&
    Number.isFinite(s.mean) &&
    Number.isFinite(s.variance) &&
    s.variance >= 0
  );
}

/** Welch's t-test of treatment vs control; confidenceLevel in (0, 1) (else CI is null). */
export function welchTTest(control: SampleSummary, treatment: SampleSummary, confidenceLevel = 0.95): WelchResult {
  const base: WelchResult = {
    difference: null,
    std_error: null,
    t: null,
    df: null,
    p_value: 1,
    ci_lower: null,
    ci_upper: null,
    confidence_level: isOpenUnit(confidenceLevel) ? confidenceLevel : null,
    reason: null,
  };
  if (!validSummary(control) || !validSummary(treatment)) return { ...base, reason: 'invalid_input' };
  if (control.n === 0 || treatment.n === 0) return { ...base, reason: 'insufficient_data' };
  const difference = finiteOrNull(treatment.mean - control.mean);
  if (difference === null) return { ...base, reason: 'overflow' };
  if (control.n < 2 || treatment.n < 2) return { ...base, difference, reason: 'insufficient_data' };

  const vc = control.variance / control.n;
  const vt = treatment.variance / treatment.n;
  const se2 = vc + vt;
  if (se2 === 0) return { ...base, difference, reason: 'zero_variance' };
  const se = Math.sqrt(se2);
  const t = difference / se;
  if (!Number.isFinite(se) || !Number.isFinite(t)) return { ...base, difference, reason: 'overflow' };
  const df = satterthwaiteDf(vc, control.n, vt, treatment.n);
  const p = studentTTwoSidedP(t, df);
  let ciLower: number | null = null;
  let ciUpper: number | null = null;
  if (isOpenUnit(confidenceLevel)) {
    [ciLower, ciUpper] = symmetricInterval(difference, studentTQuantile(1 - (1 - confidenceLevel) / 2, df) * se);
  }
  return {
    ...base,
    difference,
    std_error: se,
    t,
    df,
    p_value: Number.isNaN(p) ? 1 : p,
    ci_lower: ciLower,
    ci_upper: ciUpper,
  };
}
