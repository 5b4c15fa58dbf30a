/**
 * Sample-ratio-mismatch (SRM) check: Pearson chi-square goodness of fit of the observed
 * assignment counts against the configured allocation.
 *
 *   E_i = N * w_i / sum(w),   X^2 = sum (O_i - E_i)^2 / E_i,   df = k - 1,   p = P(chi2_df >= X^2)
 *
 * Conventions (never throws, never NaN):
 *   - returns null when the input cannot be tested: lengths differ, fewer than 2 variants,
 *     negative / non-finite / non-integer counts, negative or non-finite allocations,
 *     allocations summing to 0, or a total of 0 observations;
 *   - a variant with 0% allocation and 0 observations is left out (it does not count in df);
 *     if fewer than 2 variants with a positive allocation remain, returns null;
 *   - a variant with 0% allocation that nevertheless received traffic is a certain mismatch:
 *     statistic null (infinite), p_value 0, srm true, df = (variants with allocation or
 *     traffic) - 1, at least 1.
 */
import { chiSquareSf } from './distributions.js';
import { isCount } from './numeric.js';

/** p-values below this flag a sample ratio mismatch. */
export const SRM_P_THRESHOLD = 0.001;

export interface SrmResult {
  /** chi-square statistic; null when infinite (traffic in a 0% variant) */
  statistic: number | null;
  p_value: number;
  df: number;
  /** expected counts, in input order */
  expected: number[];
  /** p_value < SRM_P_THRESHOLD */
  srm: boolean;
}

export function srmChiSquare(observed: readonly number[], allocationPercent: readonly number[]): SrmResult | null {
  if (observed.length !== allocationPercent.length || observed.length < 2) return null;
  if (!observed.every(isCount)) return null;
  if (!allocationPercent.every((w) => Number.isFinite(w) && w >= 0)) return null;
  const total = observed.reduce((a, b) => a + b, 0);
  const weightSum = allocationPercent.reduce((a, b) => a + b, 0);
  if (total === 0 || !(weightSum > 0) || !Number.isFinite(weightSum) || !Number.isFinite(total)) return null;

  const expected = allocationPercent.map((w) => total * (w / weightSum));
  let active = 0;
  let impossible = false;
  let statistic = 0;
  for (let i = 0; i < observed.length; i++) {
    const e = expected[i];
    const o = observed[i];
    if (allocationPercent[i] === 0 || e === 0) {
      if (o > 0) impossible = true;
      continue;
    }
    active++;
    const diff = o - e;
    statistic += (diff * diff) / e;
  }
  if (impossible) {
    const inPlay = observed.filter((o, i) => o > 0 || allocationPercent[i] > 0).length;
    return { statistic: null, p_value: 0, df: Math.max(1, inPlay - 1), expected, srm: true };
  }
  if (active < 2) return null;
  const df = active - 1;
  if (!Number.isFinite(statistic)) return { statistic: null, p_value: 0, df, expected, srm: true };
  const p = chiSquareSf(statistic, df);
  const pValue = Number.isNaN(p) ? 1 : p;
  return { statistic, p_value: pValue, df, expected, srm: pValue < SRM_P_THRESHOLD };
}
