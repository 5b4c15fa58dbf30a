/**
 * Power analysis for a two-sided test of two means (equal allocation, normal approximation; e.g. Chow, Shao & Wang,
 * "Sample Size Calculations in Clinical Research", 3.2.1), for mean, capped-mean and ratio metrics (a ratio's σ² is
 * its per-user delta-method variance, n·Var(R)):
 *
 *   n     = 2σ² (z_{1−α/2} + z_{power})² / δ²                  per variant, δ = the effect to detect (absolute)
 *   power = Φ(|δ|·√(n / (2σ²)) − z_{1−α/2})                     (the same formula solved for the power)
 *
 * Same conventions as power.ts: { value, reason: null } or { value: null, reason }; never throws, never NaN.
 */
import { normalCdf, normalQuantile } from './distributions.js';
import { isOpenUnit } from './numeric.js';
import type { Computed, SampleSize } from './power.js';

function check(sigma2: number, effect: number, alpha: number): 'invalid_input' | 'invalid_alpha' | 'zero_effect' | null {
  if (!Number.isFinite(sigma2) || !(sigma2 > 0) || !Number.isFinite(effect)) return 'invalid_input';
  if (!isOpenUnit(alpha)) return 'invalid_alpha';
  return effect === 0 ? 'zero_effect' : null;
}

/** Units per variant to detect an absolute difference `effect` of means with per-user variance sigma2. */
export function sampleSizeTwoMeans(sigma2: number, effect: number, alpha = 0.05, power = 0.8): Computed<SampleSize> {
  const failed = check(sigma2, effect, alpha);
  if (failed) return { value: null, reason: failed };
  if (!isOpenUnit(power) || !(normalQuantile(1 - alpha / 2) + normalQuantile(power) > 0)) return { value: null, reason: 'invalid_power' };
  const z = normalQuantile(1 - alpha / 2) + normalQuantile(power);
  const n = (2 * sigma2 * z * z) / (effect * effect);
  if (!Number.isFinite(n) || Math.ceil(n) > Number.MAX_SAFE_INTEGER) return { value: null, reason: 'out_of_range' };
  return { value: { n_per_variant: Math.ceil(n), n_per_variant_unrounded: n }, reason: null };
}

/** Power reached with nPerVariant units per variant (inverse of sampleSizeTwoMeans). */
export function achievedPowerTwoMeans(sigma2: number, effect: number, nPerVariant: number, alpha = 0.05): Computed<number> {
  const failed = check(sigma2, effect, alpha);
  if (failed && failed !== 'zero_effect') return { value: null, reason: failed };
  if (!Number.isFinite(nPerVariant) || nPerVariant < 0) return { value: null, reason: 'invalid_input' };
  const p = normalCdf(Math.abs(effect) * Math.sqrt(nPerVariant / (2 * sigma2)) - normalQuantile(1 - alpha / 2));
  return Number.isFinite(p) ? { value: p, reason: null } : { value: null, reason: 'out_of_range' };
}
