/**
 * Guardrail decision for guarded rollouts: a one-sided use of the mixture sequential probability ratio test (mSPRT,
 * Robbins 1970; Johari, Pekelis & Walsh, "Always valid inference", 2017) on the difference of two means, with
 * plug-in (Welch) variance and a normal mixing distribution scaled to the data.
 *
 * Each sample is per-user values (here: a user's count of one guardrail event in the window) summarised as
 * n, sum, sum of squares. With means m_b (baseline) and m_t (treatment) and unbiased variances s_b², s_t²:
 *
 *   d   = m_t − m_b
 *   V   = s_b²/n_b + s_t²/n_t                       (variance of d)
 *   σ̄²  = ((n_b−1)s_b² + (n_t−1)s_t²) / (n_b+n_t−2)  (pooled per-user variance)
 *   τ²  = ρ² σ̄²                                      (mixing variance: effects of about ρ per-user sd)
 *   log Λ = −½ log(1 + τ²/V) + (τ²/(V+τ²)) · d²/(2V)
 *
 * The guardrail is degraded when log Λ ≥ log(1/α), α = 1 − confidence, AND d points in the harmful direction
 * (an increase when lower is better, a decrease when higher is better). Λ is a nonnegative martingale under
 * "no difference", so by Ville's inequality P(Λ ever ≥ 1/α) ≤ α however often it is looked at; asking for the
 * harmful sign as well only removes alarms, so the false-alarm rate stays at most α (about α/2 in practice).
 * ρ does not depend on α, so a higher confidence can only remove alarms (monotone in the confidence).
 *
 * Degenerate answers (never a throw, never NaN): invalid input (n not a finite integer, negative or inconsistent
 * sums, confidence outside (0, 1), ρ² ≤ 0) → reason 'invalid_input'; fewer than 2 users in a sample →
 * 'insufficient_data'; V = 0 (every user has the same value in both samples) → 'zero_variance'. Each of them is
 * "not degraded" with p = 1.
 */

import { ratioArm, type RatioStats } from './ratio.js';

export type GuardrailDirection = 'lower_is_better' | 'higher_is_better';

/** Per-user values of one sample: number of users, sum and sum of squares of their values. */
export interface GuardrailSample {
  n: number;
  sum: number;
  sum_squares: number;
}

export interface GuardrailInput {
  baseline: GuardrailSample;
  treatment: GuardrailSample;
  direction: GuardrailDirection;
  /** 1 − α, in (0, 1) */
  confidence: number;
  /** ρ²: mixing variance in units of the per-user variance; default DEFAULT_MIXING_SCALE */
  mixingScale?: number;
}

export type GuardrailDegenerateReason = 'invalid_input' | 'insufficient_data' | 'zero_variance';

export interface GuardrailResult {
  degraded: boolean;
  baseline_mean: number | null;
  treatment_mean: number | null;
  /** treatment_mean − baseline_mean */
  difference: number | null;
  /** difference / baseline_mean; null when the baseline mean is 0 */
  relative_difference: number | null;
  z: number | null;
  log_likelihood_ratio: number | null;
  /** log(1/α): the evidence a degradation needs */
  log_threshold: number | null;
  /** min(1, 1/Λ): two-sided always-valid p-value */
  always_valid_p: number;
  reason: GuardrailDegenerateReason | null;
}

/** τ = σ̄/20: the mixture puts its weight on effects of about 5 % of a per-user standard deviation. */
export const DEFAULT_MIXING_SCALE = 1 / 400;

const EMPTY: GuardrailResult = {
  degraded: false,
  baseline_mean: null,
  treatment_mean: null,
  difference: null,
  relative_difference: null,
  z: null,
  log_likelihood_ratio: null,
  log_threshold: null,
  always_valid_p: 1,
  reason: null,
};

function validSample(s: GuardrailSample): boolean {
  return (
    s !== null && typeof s === 'object' &&
    Number.isSafeInteger(s.n) && s.n >= 0 &&
    Number.isFinite(s.sum) && Number.isFinite(s.sum_squares) && s.sum_squares >= 0 &&
    // Cauchy–Schwarz: (Σx)² ≤ n Σx² for real values (a small tolerance for rounding).
    s.sum * s.sum <= s.n * s.sum_squares * (1 + 1e-9) + 1e-9
  );
}

/** Unbiased sample variance from sums (0 when rounding makes it slightly negative). */
function varianceOf(s: GuardrailSample): number {
  const mean = s.sum / s.n;
  return Math.max(0, (s.sum_squares - s.n * mean * mean) / (s.n - 1));
}

/** True when the settings every guardrail test takes (direction, confidence, mixing scale) are out of range. */
function invalidSettings(direction: GuardrailDirection, confidence: number, rho2: number): boolean {
  return !(
    (direction === 'lower_is_better' || direction === 'higher_is_better') &&
    Number.isFinite(confidence) && confidence > 0 && confidence < 1 &&
    Number.isFinite(rho2) && rho2 > 0
  );
}

/**
 * The decision from the two arms' values (mb, mt), the variance v of their difference and the pooled per-user
 * variance; shared by the mean (guardrailMsprt) and the ratio (guardrailMsprtRatio) tests.
 */
function decide(
  mb: number, mt: number, v: number, pooled: number, direction: GuardrailDirection, rho2: number, logThreshold: number,
): GuardrailResult {
  const d = mt - mb;
  // A baseline mean so near zero that the ratio overflows has no meaningful relative difference either.
  const relative = mb !== 0 ? d / mb : NaN;
  const means = {
    baseline_mean: mb, treatment_mean: mt, difference: d,
    relative_difference: Number.isFinite(relative) ? relative : null, log_threshold: logThreshold,
  };
  if (!(v > 0) || !(pooled > 0) || !Number.isFinite(v) || !Number.isFinite(pooled)) {
    return { ...EMPTY, ...means, reason: Number.isFinite(v) && Number.isFinite(pooled) ? 'zero_variance' : 'invalid_input' };
  }
  const tau2 = rho2 * pooled;
  const z = d / Math.sqrt(v);
  const logLambda = -0.5 * Math.log1p(tau2 / v) + ((tau2 / (v + tau2)) * z * z) / 2;
  if (!Number.isFinite(logLambda) || !Number.isFinite(z)) return { ...EMPTY, ...means, reason: 'invalid_input' };
  const harmful = direction === 'lower_is_better' ? d > 0 : d < 0;
  return {
    ...means,
    degraded: harmful && logLambda >= logThreshold,
    z,
    log_likelihood_ratio: logLambda,
    always_valid_p: Math.min(1, Math.exp(-logLambda)),
    reason: null,
  };
}

/** One-sided mSPRT decision for a guardrail metric; see the file comment. */
export function guardrailMsprt(input: GuardrailInput): GuardrailResult {
  const { baseline: b, treatment: t, direction, confidence } = input;
  const rho2 = input.mixingScale ?? DEFAULT_MIXING_SCALE;
  if (!validSample(b) || !validSample(t) || invalidSettings(direction, confidence, rho2)) return { ...EMPTY, reason: 'invalid_input' };
  const logThreshold = -Math.log1p(-confidence);
  if (b.n < 2 || t.n < 2) {
    return {
      ...EMPTY,
      baseline_mean: b.n > 0 ? b.sum / b.n : null,
      treatment_mean: t.n > 0 ? t.sum / t.n : null,
      log_threshold: logThreshold,
      reason: 'insufficient_data',
    };
  }
  const vb = varianceOf(b);
  const vt = varianceOf(t);
  const pooled = ((b.n - 1) * vb + (t.n - 1) * vt) / (b.n + t.n - 2);
  return decide(b.sum / b.n, t.sum / t.n, vb / b.n + vt / t.n, pooled, direction, rho2, logThreshold);
}

export interface GuardrailRatioInput {
  baseline: RatioStats;
  treatment: RatioStats;
  direction: GuardrailDirection;
  confidence: number;
  mixingScale?: number;
}

/**
 * The same one-sided mSPRT for a ratio metric (per-user numerator x and denominator y, src/stats/ratio.ts): the arms'
 * values are the ratios of means R = Σx/Σy, the variance of their difference is the sum of the delta-method variances
 * v_b + v_t (Deng et al. 2018, as results' delta-method comparison), and the pooled per-user variance is that of the
 * linearised values, ((n_b−1)·n_b·v_b + (n_t−1)·n_t·v_t)/(n_b+n_t−2). With y ≡ 1 this is guardrailMsprt exactly.
 * An arm with fewer than 2 users or no denominator (Σy = 0) gives 'insufficient_data'.
 */
export function guardrailMsprtRatio(input: GuardrailRatioInput): GuardrailResult {
  const { direction, confidence } = input;
  const rho2 = input.mixingScale ?? DEFAULT_MIXING_SCALE;
  const b = ratioArm(input.baseline);
  const t = ratioArm(input.treatment);
  if (b === null || t === null || invalidSettings(direction, confidence, rho2)) return { ...EMPTY, reason: 'invalid_input' };
  const logThreshold = -Math.log1p(-confidence);
  if (b.ratio === null || t.ratio === null || b.variance === null || t.variance === null) {
    return { ...EMPTY, baseline_mean: b.ratio, treatment_mean: t.ratio, log_threshold: logThreshold, reason: 'insufficient_data' };
  }
  const pooled = ((b.n - 1) * b.n * b.variance + (t.n - 1) * t.n * t.variance) / (b.n + t.n - 2);
  return decide(b.ratio, t.ratio, b.variance + t.variance, pooled, direction, rho2, logThreshold);
}
