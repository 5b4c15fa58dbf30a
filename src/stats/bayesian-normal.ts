/**
 * Bayesian comparison of two means (or ratios of means) by the normal approximation with a flat prior, on the relative
 * effect (the approach of GrowthBook's Bayesian engine for mean and ratio metrics with an uninformative prior; Stucchio,
 * "Bayesian A/B Testing at VWO", 2015, for the loss). Each arm's estimate m (a mean of per-user values, or a ratio of
 * means) comes with the variance v of that estimate (s²/n for a mean; the delta-method variance for a ratio):
 *
 *   posterior of an arm's value      ~ N(m, v),   credible interval m ± z_{(1+level)/2}·√v
 *   relative effect                   L = m_t/m_c − 1
 *   se_L                              = √(v_t/m_c² + m_t²·v_c/m_c⁴)               (delta method)
 *   posterior of the relative effect ~ N(L, se_L²)
 *   P(treatment beats control)        = Φ(L/se_L)
 *   expected loss of the treatment    = E[max(−L', 0)] = se_L·φ(L/se_L) − L·Φ(−L/se_L)
 *   ROPE probability                  = Φ((rope − L)/se_L) − Φ((−rope − L)/se_L)
 *
 * So the experiment's loss_threshold and rope read as fractions of the control's value (0.01: 1 %), whatever the
 * metric's unit. Never throws, never NaN: invalid input (non-finite, negative variances, level outside (0, 1), rope < 0)
 * gives 'invalid_input'; a control value ≤ 0 (the relative effect is not defined) 'non_positive_control'; se_L = 0
 * 'zero_variance'. Each of them leaves the probabilities null.
 */
import { normalCdf, normalPdf, normalQuantile } from './distributions.js';
import { finiteOrNull, isOpenUnit } from './numeric.js';

/** One arm: its estimate and the variance of the estimate. */
export interface NormalArm {
  mean: number;
  variance: number;
}

export type NormalBayesReason = 'invalid_input' | 'non_positive_control' | 'zero_variance';

export interface NormalBayesResult {
  /** m ± z√v per arm, at the credible level; null on invalid input */
  control_interval: [number, number] | null;
  treatment_interval: [number, number] | null;
  relative_effect: number | null;
  relative_std_error: number | null;
  prob_treatment_beats_control: number | null;
  expected_loss_treatment: number | null;
  rope_probability: number | null;
  reason: NormalBayesReason | null;
}

const validArm = (a: NormalArm) => Number.isFinite(a.mean) && Number.isFinite(a.variance) && a.variance >= 0;

/** An arm's equal-tailed credible interval m ± z_{(1+level)/2}·√v; null on invalid input. */
export function normalInterval(a: NormalArm, credibleLevel: number): [number, number] | null {
  return validArm(a) && isOpenUnit(credibleLevel) ? armInterval(a, normalQuantile((1 + credibleLevel) / 2)) : null;
}

function armInterval(a: NormalArm, z: number): [number, number] | null {
  const half = z * Math.sqrt(a.variance);
  const lower = finiteOrNull(a.mean - half);
  const upper = finiteOrNull(a.mean + half);
  return lower === null || upper === null ? null : [lower, upper];
}

/** The normal-approximation Bayesian comparison of treatment with control (see above). */
export function normalBayes(control: NormalArm, treatment: NormalArm, options: { credibleLevel: number; rope: number }): NormalBayesResult {
  const none: NormalBayesResult = {
    control_interval: null, treatment_interval: null, relative_effect: null, relative_std_error: null,
    prob_treatment_beats_control: null, expected_loss_treatment: null, rope_probability: null, reason: null,
  };
  const { credibleLevel, rope } = options;
  if (!validArm(control) || !validArm(treatment) || !isOpenUnit(credibleLevel) || !(Number.isFinite(rope) && rope >= 0)) {
    return { ...none, reason: 'invalid_input' };
  }
  const z = normalQuantile((1 + credibleLevel) / 2);
  const intervals = { ...none, control_interval: armInterval(control, z), treatment_interval: armInterval(treatment, z) };
  const mc = control.mean;
  if (!(mc > 0)) return { ...intervals, reason: 'non_positive_control' };
  const effect = finiteOrNull(treatment.mean / mc - 1);
  const se = finiteOrNull(Math.sqrt(treatment.variance / (mc * mc) + (treatment.mean * treatment.mean * control.variance) / (mc * mc * mc * mc)));
  if (effect === null || se === null) return { ...intervals, reason: 'invalid_input' };
  if (se === 0) return { ...intervals, relative_effect: effect, relative_std_error: 0, reason: 'zero_variance' };
  const u = effect / se;
  return {
    ...intervals,
    relative_effect: effect,
    relative_std_error: se,
    prob_treatment_beats_control: normalCdf(u),
    expected_loss_treatment: Math.max(0, se * normalPdf(u) - effect * normalCdf(-u)),
    rope_probability: Math.max(0, normalCdf((rope - effect) / se) - normalCdf((-rope - effect) / se)),
  };
}
