/**
 * Power analysis for a two-sided test of two proportions (equal allocation), using the
 * pooled-variance normal-approximation formula (Fleiss; the same as the reference vectors):
 *
 *   n = ( z_{1-alpha/2} * sqrt(2 pbar (1-pbar)) + z_{power} * sqrt(p1(1-p1) + p2(1-p2)) )^2 / (p2 - p1)^2
 *   with pbar = (p1 + p2) / 2, n = units per variant.
 *
 * achievedPower inverts the same formula for power, and minimumDetectableEffect solves it
 * for the effect by bisection, so the three functions are mutually consistent.
 *
 * Every function returns { value, reason: null } on success or { value: null, reason } when
 * the calculation is impossible or leaves floating-point range; it never throws and never
 * returns NaN / Infinity.
 */
import { normalCdf, normalQuantile } from './distributions.js';
import { isOpenUnit } from './numeric.js';

export type PowerFailureReason =
  /** an argument is not a finite number of the right sign */
  | 'invalid_input'
  /** baseline rate not strictly inside (0, 1) */
  | 'invalid_rate'
  /** treatment rate (baseline + effect) not strictly inside (0, 1), e.g. rate + effect >= 1 */
  | 'rate_out_of_range'
  /** treatment rate equals the baseline */
  | 'zero_effect'
  /** alpha not inside (0, 1) */
  | 'invalid_alpha'
  /** power not inside (0, 1), or so low that no sample is needed */
  | 'invalid_power'
  /** the answer exceeds Number.MAX_SAFE_INTEGER (or overflows) */
  | 'out_of_range'
  /** no effect in the allowed range reaches the requested power with this sample */
  | 'not_reachable'
  /** zero daily traffic (or zero share / allocation) */
  | 'no_traffic';

export type Computed<T> = { value: T; reason: null } | { value: null; reason: PowerFailureReason };

export type EffectType = 'absolute' | 'relative';

export interface SampleSize {
  /** ceil of the unrounded value */
  n_per_variant: number;
  n_per_variant_unrounded: number;
}

export interface MinimumDetectableEffect {
  /** |p2 - p1| */
  absolute: number;
  /** |p2 - p1| / p1 */
  relative: number;
  treatment_rate: number;
}

const fail = <T>(reason: PowerFailureReason): Computed<T> => ({ value: null, reason });
const ok = <T>(value: T): Computed<T> => ({ value, reason: null });

/** Treatment rate implied by a baseline and an effect (relative: p1 * (1 + effect)). */
export function treatmentRateFor(baselineRate: number, effect: number, effectType: EffectType = 'relative'): number {
  return effectType === 'relative' ? baselineRate * (1 + effect) : baselineRate + effect;
}

function checkCommon(p1: number, alpha: number): PowerFailureReason | null {
  if (!Number.isFinite(p1)) return 'invalid_input';
  if (!isOpenUnit(p1)) return 'invalid_rate';
  if (!isOpenUnit(alpha)) return 'invalid_alpha';
  return null;
}

/** Units per variant to detect p1 -> p2 with a two-sided test at level alpha with the given power. */
export function sampleSizeTwoProportions(
  baselineRate: number,
  treatmentRate: number,
  alpha = 0.05,
  power = 0.8,
): Computed<SampleSize> {
  const p1 = baselineRate;
  const p2 = treatmentRate;
  const common = checkCommon(p1, alpha);
  if (common) return fail(common);
  if (!Number.isFinite(p2)) return fail('invalid_input');
  if (!isOpenUnit(p2)) return fail('rate_out_of_range');
  if (!isOpenUnit(power)) return fail('invalid_power');
  const d = p2 - p1;
  if (d === 0) return fail('zero_effect');
  const pbar = (p1 + p2) / 2;
  const zAlpha = normalQuantile(1 - alpha / 2);
  const zBeta = normalQuantile(power);
  const numerator = zAlpha * Math.sqrt(2 * pbar * (1 - pbar)) + zBeta * Math.sqrt(p1 * (1 - p1) + p2 * (1 - p2));
  if (!(numerator > 0)) return fail('invalid_power');
  const n = (numerator * numerator) / (d * d);
  if (!Number.isFinite(n) || Math.ceil(n) > Number.MAX_SAFE_INTEGER) return fail('out_of_range');
  return ok({ n_per_variant: Math.ceil(n), n_per_variant_unrounded: n });
}

/** Sample size from a baseline and a minimum detectable effect (absolute or relative). */
export function sampleSizeForEffect(
  baselineRate: number,
  mde: number,
  effectType: EffectType = 'relative',
  alpha = 0.05,
  power = 0.8,
): Computed<SampleSize> {
  if (!Number.isFinite(mde)) return fail('invalid_input');
  return sampleSizeTwoProportions(baselineRate, treatmentRateFor(baselineRate, mde, effectType), alpha, power);
}

function powerUnchecked(p1: number, p2: number, n: number, zAlpha: number): number {
  const pbar = (p1 + p2) / 2;
  const z =
    (Math.abs(p2 - p1) * Math.sqrt(n) - zAlpha * Math.sqrt(2 * pbar * (1 - pbar))) /
    Math.sqrt(p1 * (1 - p1) + p2 * (1 - p2));
  return normalCdf(z);
}

/**
 * Power achieved with nPerVariant units per variant (inverse of sampleSizeTwoProportions).
 * p1 = p2 gives the one-sided false-positive rate alpha/2 of the approximation.
 */
export function achievedPower(
  baselineRate: number,
  treatmentRate: number,
  nPerVariant: number,
  alpha = 0.05,
): Computed<number> {
  const common = checkCommon(baselineRate, alpha);
  if (common) return fail(common);
  if (!Number.isFinite(treatmentRate) || !Number.isFinite(nPerVariant) || nPerVariant < 0) return fail('invalid_input');
  if (!isOpenUnit(treatmentRate)) return fail('rate_out_of_range');
  const p = powerUnchecked(baselineRate, treatmentRate, nPerVariant, normalQuantile(1 - alpha / 2));
  return Number.isFinite(p) ? ok(p) : fail('out_of_range');
}

/**
 * Smallest effect (towards higher rates for 'increase', lower for 'decrease') detectable with
 * the given power, solved by bisection on the power function over the allowed range of the
 * treatment rate ((p1, 1) or (0, p1)). 'not_reachable' when even the extreme rate falls short.
 */
export function minimumDetectableEffect(
  baselineRate: number,
  nPerVariant: number,
  alpha = 0.05,
  power = 0.8,
  direction: 'increase' | 'decrease' = 'increase',
): Computed<MinimumDetectableEffect> {
  const p1 = baselineRate;
  const common = checkCommon(p1, alpha);
  if (common) return fail(common);
  if (!Number.isFinite(nPerVariant) || nPerVariant < 0) return fail('invalid_input');
  if (!isOpenUnit(power)) return fail('invalid_power');
  const zAlpha = normalQuantile(1 - alpha / 2);
  const sign = direction === 'increase' ? 1 : -1;
  const maxEffect = direction === 'increase' ? 1 - p1 : p1;
  const powerAt = (d: number): number => powerUnchecked(p1, p1 + sign * d, nPerVariant, zAlpha);
  // Bracket: tiny effect ... effect leaving a margin of one ulp-scale step inside (0, 1).
  let lo = 0;
  let hi = maxEffect * (1 - 1e-12);
  if (!(hi > 0)) return fail('not_reachable');
  if (powerAt(lo) >= power) return fail('invalid_power');
  if (!(powerAt(hi) >= power)) return fail('not_reachable');
  for (let i = 0; i < 200 && hi - lo > 1e-15 * Math.max(hi, 1e-300); i++) {
    const mid = (lo + hi) / 2;
    if (powerAt(mid) >= power) hi = mid;
    else lo = mid;
  }
  const absolute = hi;
  const relative = absolute / p1;
  if (!Number.isFinite(relative)) return fail('out_of_range');
  return ok({ absolute, relative, treatment_rate: p1 + sign * absolute });
}

export interface RuntimeInput {
  nPerVariant: number;
  /** eligible units per day entering the experiment before traffic share */
  dailyTraffic: number;
  /** number of variants (equal split) – ignored when allocationPercent is given */
  variantCount?: number;
  /** allocation weights per variant (any positive scale); the smallest arm sets the runtime */
  allocationPercent?: readonly number[];
  /** share of traffic included in the experiment, in (0, 1]; default 1 */
  trafficShare?: number;
}

/** Days until every variant reaches nPerVariant units: ceil(max_i n / (traffic * share * w_i)). */
export function runtimeDays(input: RuntimeInput): Computed<number> {
  const { nPerVariant, dailyTraffic } = input;
  const share = input.trafficShare ?? 1;
  if (!Number.isFinite(nPerVariant) || nPerVariant < 0) return fail('invalid_input');
  if (!Number.isFinite(dailyTraffic) || dailyTraffic < 0) return fail('invalid_input');
  if (!Number.isFinite(share) || share < 0 || share > 1) return fail('invalid_input');
  let minShare: number;
  if (input.allocationPercent !== undefined) {
    const w = input.allocationPercent;
    if (w.length === 0 || !w.every((x) => Number.isFinite(x) && x >= 0)) return fail('invalid_input');
    const sum = w.reduce((a, b) => a + b, 0);
    if (!(sum > 0) || !Number.isFinite(sum)) return fail('no_traffic');
    minShare = Math.min(...w) / sum;
  } else {
    const k = input.variantCount ?? 2;
    if (!Number.isInteger(k) || k < 1) return fail('invalid_input');
    minShare = 1 / k;
  }
  if (nPerVariant === 0) return ok(0);
  const perArmDaily = dailyTraffic * share * minShare;
  if (!(perArmDaily > 0)) return fail('no_traffic');
  const days = Math.ceil(nPerVariant / perArmDaily);
  if (!Number.isFinite(days) || days > Number.MAX_SAFE_INTEGER) return fail('out_of_range');
  return ok(days);
}
