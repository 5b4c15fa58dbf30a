/**
 * Conversion-metric comparison (normal approximation, unpooled / Wald):
 *
 *   p_c = c_c / n_c,  p_t = c_t / n_t,  d = p_t - p_c
 *   se(d)        = sqrt(p_c(1-p_c)/n_c + p_t(1-p_t)/n_t)
 *   CI(d)        = d ± z_{1-(1-level)/2} se(d)
 *   z, p_value   = d / se(d), 2 (1 - Phi(|z|))      (consistent with CI(d): 0 is outside iff p < 1-level)
 *   lift         = p_t / p_c - 1
 *   se(lift)     = sqrt( Var(p_t)/p_c^2 + p_t^2 Var(p_c)/p_c^4 )      (delta method)
 *   CI(lift)     = lift ± z se(lift)
 *
 * Conventions (never throws, never NaN/Infinity):
 *   - invalid counts (negative, non-finite, conversions > n) -> null;
 *   - an arm with n = 0: its rate and everything derived are null, p_value 1;
 *   - se(d) = 0 (both rates 0 or 1): z and the CIs are null, p_value 1;
 *   - p_c = 0: relative lift and its CI are null (undefined);
 *   - confidence level outside (0, 1): CIs null.
 */
import { normalCdf, normalQuantile } from './distributions.js';
import { finiteOrNull, isOpenUnit } from './numeric.js';

export interface ProportionComparison {
  control_rate: number | null;
  treatment_rate: number | null;
  absolute_difference: number | null;
  absolute_std_error: number | null;
  absolute_ci: [number, number] | null;
  relative_lift: number | null;
  relative_std_error: number | null;
  relative_ci: [number, number] | null;
  z: number | null;
  p_value: number;
  /** the requested level, or null when it was not inside (0, 1) (then the CIs are null) */
  confidence_level: number | null;
}

function validArm(conversions: number, n: number): boolean {
  return Number.isFinite(conversions) && Number.isFinite(n) && conversions >= 0 && n >= 0 && conversions <= n;
}

function interval(centre: number, half: number): [number, number] | null {
  const lo = centre - half;
  const hi = centre + half;
  return Number.isFinite(lo) && Number.isFinite(hi) ? [lo, hi] : null;
}

/** Compare treatment vs control conversion rates; null on invalid counts. */
export function compareProportions(
  controlConversions: number,
  controlN: number,
  treatmentConversions: number,
  treatmentN: number,
  confidenceLevel = 0.95,
): ProportionComparison | null {
  if (!validArm(controlConversions, controlN) || !validArm(treatmentConversions, treatmentN)) return null;
  const pc = controlN > 0 ? controlConversions / controlN : null;
  const pt = treatmentN > 0 ? treatmentConversions / treatmentN : null;
  const out: ProportionComparison = {
    control_rate: pc,
    treatment_rate: pt,
    absolute_difference: null,
    absolute_std_error: null,
    absolute_ci: null,
    relative_lift: null,
    relative_std_error: null,
    relative_ci: null,
    z: null,
    p_value: 1,
    confidence_level: isOpenUnit(confidenceLevel) ? confidenceLevel : null,
  };
  if (pc === null || pt === null) return out;
  const varC = (pc * (1 - pc)) / controlN;
  const varT = (pt * (1 - pt)) / treatmentN;
  const d = pt - pc;
  const se = Math.sqrt(varC + varT);
  out.absolute_difference = d;
  out.absolute_std_error = finiteOrNull(se);
  const zq = isOpenUnit(confidenceLevel) ? normalQuantile(1 - (1 - confidenceLevel) / 2) : NaN;
  if (se > 0 && Number.isFinite(se)) {
    const z = d / se;
    out.z = finiteOrNull(z);
    out.p_value = Number.isFinite(z) ? Math.min(1, 2 * normalCdf(-Math.abs(z))) : 1;
    if (Number.isFinite(zq)) out.absolute_ci = interval(d, zq * se);
  }
  if (pc > 0) {
    const lift = pt / pc - 1;
    out.relative_lift = finiteOrNull(lift);
    const ratio = pt / pc;
    const seLift = Math.sqrt(varT + ratio * ratio * varC) / pc;
    out.relative_std_error = finiteOrNull(seLift);
    if (out.relative_lift !== null && seLift > 0 && Number.isFinite(seLift) && Number.isFinite(zq)) {
      out.relative_ci = interval(lift, zq * seLift);
    }
  }
  return out;
}
