/**
 * Sequential (always-valid) sample-ratio-mismatch test: the Dirichlet-multinomial mixture test of Lindon & Malek,
 * "Anytime-Valid Inference for Multinomial Count Data" (NeurIPS 2022).
 *
 * Null: each assignment goes to variant i with probability theta0_i = w_i / sum(w). Alternative: the probabilities
 * theta follow a Dirichlet(alpha) prior centred on the null, alpha_i = k * theta0_i (k the concentration). With x_i the
 * assignments of variant i after n in all, the Bayes factor of the mixture against the null is
 *
 *   BF_n = Gamma(A) / Gamma(A + n) * prod_i Gamma(alpha_i + x_i) / Gamma(alpha_i) / prod_i theta0_i^x_i,  A = sum alpha
 *
 * BF_n is a non-negative martingale under the null with BF_0 = 1, so by Ville's inequality P(sup_n BF_n >= 1/a) <= a:
 * the always-valid p-value p_n = min(1, min over the looks so far of 1 / BF_t) may be read after every assignment,
 * every day, or on every rollup, and stays below a with probability at most a under the null, however often it is
 * read. (The chi-square p-value read the same way rejects a true null far more often.)
 *
 * Conventions (never throws, never NaN): null when the input cannot be tested (as srmChiSquare); a look whose counts
 * are not a count vector of the right length is skipped; a variant with 0% allocation that received traffic makes
 * BF infinite (p 0).
 */
import gammaln from '@stdlib/math-base-special-gammaln';
import { isCount } from './numeric.js';
import { SRM_P_THRESHOLD } from './srm.js';

/** Concentration k of the Dirichlet prior (the reference implementation's default). */
export const SRM_PRIOR_CONCENTRATION = 100;

export interface SequentialSrmResult {
  /** always-valid p-value over all looks */
  p_value: number;
  /** log Bayes factor at the last look (null when infinite) */
  log_bayes_factor: number | null;
  /** looks evaluated */
  looks: number;
  /** p_value < threshold */
  srm: boolean;
  threshold: number;
}

/** log BF_n of one look: cumulative counts per variant against the allocation (any positive scale). */
export function srmLogBayesFactor(observed: readonly number[], allocation: readonly number[], concentration = SRM_PRIOR_CONCENTRATION): number | null {
  if (observed.length !== allocation.length || observed.length < 2) return null;
  if (!observed.every(isCount) || !allocation.every((w) => Number.isFinite(w) && w >= 0)) return null;
  if (!(concentration > 0) || !Number.isFinite(concentration)) return null;
  const weightSum = allocation.reduce((a, b) => a + b, 0);
  if (!(weightSum > 0) || !Number.isFinite(weightSum)) return null;
  let alphaSum = 0;
  let n = 0;
  let logBf = 0;
  let active = 0;
  for (let i = 0; i < observed.length; i++) {
    const x = observed[i];
    const theta = allocation[i] / weightSum;
    if (theta === 0) {
      if (x > 0) return Infinity;
      continue;
    }
    active++;
    const alpha = concentration * theta;
    alphaSum += alpha;
    n += x;
    logBf += gammaln(alpha + x) - gammaln(alpha) - x * Math.log(theta);
  }
  if (active < 2) return null;
  logBf += gammaln(alphaSum) - gammaln(alphaSum + n);
  return Number.isNaN(logBf) ? null : logBf;
}

/**
 * The always-valid p-value after a sequence of looks (cumulative counts per variant, in time order), and whether it
 * is below the threshold (default: the chi-square check's, SRM_P_THRESHOLD).
 */
export function sequentialSrm(
  looks: ReadonlyArray<readonly number[]>,
  allocation: readonly number[],
  options: { concentration?: number; threshold?: number } = {},
): SequentialSrmResult | null {
  const threshold = options.threshold ?? SRM_P_THRESHOLD;
  let minP = 1;
  let last: number | null = null;
  let evaluated = 0;
  for (const look of looks) {
    if (look.reduce((a, b) => a + b, 0) === 0) continue;
    const logBf = srmLogBayesFactor(look, allocation, options.concentration);
    if (logBf === null) continue;
    evaluated++;
    last = logBf;
    minP = Math.min(minP, logBf === Infinity ? 0 : Math.min(1, Math.exp(-logBf)));
  }
  if (evaluated === 0 || last === null) return null;
  return {
    p_value: minP,
    log_bayes_factor: Number.isFinite(last) ? last : null,
    looks: evaluated,
    srm: minP < threshold,
    threshold,
  };
}
