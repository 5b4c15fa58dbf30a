/**
 * Always-valid inference for two proportions: the mixture sequential probability ratio test
 * (mSPRT) with a normal mixing distribution (Johari, Pekelis & Walsh, "Always valid
 * inference", 2017; Robbins 1970), with plug-in variance.
 *
 *   d      = p_t - p_c
 *   V      = p_c(1-p_c)/n_c + p_t(1-p_t)/n_t                 (variance of d)
 *   Z      = d / sqrt(V)
 *   Lambda = sqrt(V / (V + tau2)) * exp( tau2 Z^2 / (2 (V + tau2)) )
 *   p      = min(1, 1 / Lambda)
 *
 * Lambda is computed in log space (log Lambda = -1/2 log1p(tau2/V) + tau2 d^2 / (2 V (V+tau2)))
 * so that it never overflows; `likelihood_ratio` is null when exp(log Lambda) is not finite.
 *
 * Confidence sequence. For a hypothesised difference theta the same mixture gives
 * Lambda(theta) = sqrt(V/(V+tau2)) exp( tau2 (d-theta)^2 / (2 V (V+tau2)) ); the always-valid
 * (1-alpha) confidence sequence is {theta : Lambda(theta) < 1/alpha}. Taking logs:
 *   tau2 (d-theta)^2 / (2 V (V+tau2)) < ln(1/alpha) + 1/2 ln((V+tau2)/V)
 *   |d - theta| < sqrt( V (V+tau2) / tau2 * ( ln((V+tau2)/V) + 2 ln(1/alpha) ) )
 * so 0 lies outside the sequence exactly when p <= alpha.
 *
 * Degenerate conventions: invalid input (rates outside [0, 1], n <= 0, tau2 <= 0, non-finite
 * values, or a variance that overflows) -> reason 'invalid_input', p = 1, everything else null; V = 0 (all rates 0 or 1) -> reason 'zero_variance', p = 1 (the plug-in variance gives
 * no usable scale), interval null.
 */

export interface MsprtInput {
  controlRate: number;
  controlN: number;
  treatmentRate: number;
  treatmentN: number;
  /** variance of the normal mixing distribution over the true difference (> 0) */
  tauSquared: number;
}

export type SequentialDegenerateReason = 'invalid_input' | 'zero_variance';

export interface MsprtResult {
  difference: number | null;
  variance: number | null;
  z: number | null;
  log_likelihood_ratio: number | null;
  /** null when it overflows (the p-value is then 0) */
  likelihood_ratio: number | null;
  always_valid_p: number;
  reason: SequentialDegenerateReason | null;
}

export interface ConfidenceSequenceResult {
  difference: number | null;
  lower: number | null;
  upper: number | null;
  half_width: number | null;
  /** the requested alpha, or null when it was not inside (0, 1) */
  alpha: number | null;
  reason: SequentialDegenerateReason | null;
}

function validInput(i: MsprtInput): boolean {
  const rate = (r: number): boolean => Number.isFinite(r) && r >= 0 && r <= 1;
  const size = (n: number): boolean => Number.isFinite(n) && n > 0;
  return (
    rate(i.controlRate) &&
    rate(i.treatmentRate) &&
    size(i.controlN) &&
    size(i.treatmentN) &&
    Number.isFinite(i.tauSquared) &&
    i.tauSquared > 0
  );
}

function varianceOf(i: MsprtInput): number {
  const pc = i.controlRate;
  const pt = i.treatmentRate;
  return (pc * (1 - pc)) / i.controlN + (pt * (1 - pt)) / i.treatmentN;
}

/**
 * A difference of two asymptotically normal estimates, d, with its plug-in variance V (the mixture above applies to any
 * such estimate: Johari, Pekelis & Walsh 2017, section 4): two proportions here, and the means, capped means and ratios
 * (delta-method variance) of metric library definitions.
 */
export interface NormalDifference {
  difference: number;
  /** plug-in variance of `difference` */
  variance: number;
  /** variance of the normal mixing distribution over the true difference (> 0) */
  tauSquared: number;
}

const validNormal = (i: NormalDifference): boolean =>
  Number.isFinite(i.difference) && Number.isFinite(i.tauSquared) && i.tauSquared > 0 && i.variance >= 0;

/** mSPRT always-valid p-value for a normal difference (d, V, tau2); V not finite or negative: 'invalid_input'. */
export function msprtNormal(input: NormalDifference): MsprtResult {
  const empty: MsprtResult = {
    difference: null,
    variance: null,
    z: null,
    log_likelihood_ratio: null,
    likelihood_ratio: null,
    always_valid_p: 1,
    reason: null,
  };
  if (!validNormal(input)) return { ...empty, reason: 'invalid_input' };
  const d = input.difference;
  const v = input.variance;
  if (!Number.isFinite(v)) return { ...empty, reason: 'invalid_input' };
  if (!(v > 0)) return { ...empty, difference: d, variance: 0, reason: 'zero_variance' };
  const tau2 = input.tauSquared;
  const z = d / Math.sqrt(v);
  // tau2 d^2 / (2 V (V + tau2)) written as (tau2/(V+tau2)) * Z^2 / 2 to keep every factor finite.
  const logLambda = -0.5 * Math.log1p(tau2 / v) + ((tau2 / (v + tau2)) * z * z) / 2;
  if (!Number.isFinite(logLambda)) return { ...empty, difference: d, variance: v, reason: 'invalid_input' };
  const lr = Math.exp(logLambda);
  return {
    difference: d,
    variance: v,
    z,
    log_likelihood_ratio: logLambda,
    likelihood_ratio: Number.isFinite(lr) ? lr : null,
    always_valid_p: Math.min(1, Math.exp(-logLambda)),
    reason: null,
  };
}

/** The two proportions' difference and its unpooled variance; null on invalid input. */
function normalOfProportions(input: MsprtInput): NormalDifference | null {
  if (!validInput(input)) return null;
  return { difference: input.treatmentRate - input.controlRate, variance: varianceOf(input), tauSquared: input.tauSquared };
}

/** mSPRT always-valid p-value for the difference of two proportions. */
export function msprtTwoProportions(input: MsprtInput): MsprtResult {
  const normal = normalOfProportions(input);
  return normal ? msprtNormal(normal) : msprtNormal({ difference: NaN, variance: NaN, tauSquared: NaN });
}

/** mSPRT from raw counts (rates = conversions / n). */
export function msprtFromCounts(
  controlConversions: number,
  controlN: number,
  treatmentConversions: number,
  treatmentN: number,
  tauSquared: number,
): MsprtResult {
  return msprtTwoProportions({
    controlRate: controlConversions / controlN,
    controlN,
    treatmentRate: treatmentConversions / treatmentN,
    treatmentN,
    tauSquared,
  });
}

/** Always-valid (1 - alpha) confidence sequence for p_t - p_c (normal mixture; see above). */
export function confidenceSequenceTwoProportions(input: MsprtInput, alpha = 0.05): ConfidenceSequenceResult {
  return confidenceSequenceNormal(normalOfProportions(input) ?? { difference: NaN, variance: NaN, tauSquared: NaN }, alpha);
}

/** Always-valid (1 - alpha) confidence sequence for a normal difference (d, V, tau2). */
export function confidenceSequenceNormal(input: NormalDifference, alpha = 0.05): ConfidenceSequenceResult {
  const empty: ConfidenceSequenceResult = {
    difference: null,
    lower: null,
    upper: null,
    half_width: null,
    alpha: Number.isFinite(alpha) && alpha > 0 && alpha < 1 ? alpha : null,
    reason: null,
  };
  if (!validNormal(input) || !(Number.isFinite(alpha) && alpha > 0 && alpha < 1)) {
    return { ...empty, reason: 'invalid_input' };
  }
  const d = input.difference;
  const v = input.variance;
  if (!Number.isFinite(v)) return { ...empty, reason: 'invalid_input' };
  if (!(v > 0)) return { ...empty, difference: d, reason: 'zero_variance' };
  const tau2 = input.tauSquared;
  // V (V + tau2) / tau2 = V (1 + V / tau2)
  const scale = v * (1 + v / tau2);
  const halfWidth = Math.sqrt(scale * (Math.log1p(tau2 / v) + 2 * Math.log(1 / alpha)));
  if (!Number.isFinite(halfWidth)) return { ...empty, difference: d, reason: 'invalid_input' };
  return { ...empty, difference: d, lower: d - halfWidth, upper: d + halfWidth, half_width: halfWidth };
}

/**
 * Running minimum of a sequence of always-valid p-values (p_n := min(p_1..p_n)), which keeps
 * the always-valid guarantee and makes the reported p-value non-increasing over time.
 * NaN entries count as 1; values are clamped into [0, 1].
 */
export function runningMinimum(values: readonly number[]): number[] {
  const out: number[] = [];
  let current = 1;
  for (const v of values) {
    const x = Number.isNaN(v) ? 1 : Math.max(0, v);
    current = Math.min(current, x);
    out.push(current);
  }
  return out;
}
