/**
 * Fisher's exact test (two-sided) for a 2x2 conversion table.
 *
 *                  converted          not converted
 *   control        cc                 cn - cc
 *   treatment      tc                 tn - tc
 *
 * Conditioning on the margins, the control conversions X follow a hypergeometric law
 * (urn: cn control units = "white", tn treatment units = "black", K = cc + tc draws).
 * Two-sided p-value with R's rule (fisher.test): the sum of P(X = x) over every table with
 * P(X = x) <= P(X = cc) * (1 + 1e-7).
 *
 * Implementation (fast and stable for counts in the millions or billions):
 * - log P(X = x) is evaluated with Loader's saddle-point formulas (see saddlepoint.ts), whose
 *   absolute error does not grow with the counts, unlike lgamma differences;
 * - log P is concave in x (the hypergeometric law is log-concave), so the qualifying tables
 *   form two tails [lo, xl] and [xu, hi] around the mode; xl and xu are found by bisection;
 * - each tail is summed outward from its boundary with the ratio recurrence
 *   P(x+1)/P(x) = (cn-x)(K-x) / ((x+1)(tn-K+x+1)), in scaled (log) form, and stops once the
 *   geometric bound on the remainder is below 1e-17 of the partial sum.
 * Cost is O(log N + a few standard deviations) per call.
 */
import { logDhyper } from './saddlepoint.js';
import { isCount } from './numeric.js';

/** R's relative tolerance for "as or less likely than the observed table". */
const RELATIVE_TOLERANCE = 1 + 1e-7;

/**
 * Two-sided Fisher exact p-value for control (conversions, n) vs treatment (conversions, n).
 * Returns null when the input is not a valid table (non-integer or negative counts,
 * conversions > n, or totals beyond Number.MAX_SAFE_INTEGER). A table whose margins leave a
 * single possible table (e.g. no conversions at all, or an empty arm) has p = 1.
 */
export function fisherExactTwoSided(
  controlConversions: number,
  controlN: number,
  treatmentConversions: number,
  treatmentN: number,
): number | null {
  const cc = controlConversions;
  const cn = controlN;
  const tc = treatmentConversions;
  const tn = treatmentN;
  if (!isCount(cc) || !isCount(cn) || !isCount(tc) || !isCount(tn)) return null;
  if (cc > cn || tc > tn) return null;
  const total = cn + tn;
  if (!isCount(total)) return null;
  const k = cc + tc;
  const lo = Math.max(0, k - tn);
  const hi = Math.min(k, cn);
  if (lo === hi) return 1;

  const logP = (x: number): number => logDhyper(x, cn, tn, k);
  // ratio P(x+1)/P(x), valid for lo <= x < hi
  const up = (x: number): number => ((cn - x) * (k - x)) / ((x + 1) * (tn - k + x + 1));
  // ratio P(x-1)/P(x), valid for lo < x <= hi
  const down = (x: number): number => (x * (tn - k + x)) / ((cn - x + 1) * (k - x + 1));

  // Mode: floor((K+1)(cn+1)/(N+2)), then nudged so that it is exact despite rounding.
  let mode = Math.floor(((k + 1) / (total + 2)) * (cn + 1));
  mode = Math.min(hi, Math.max(lo, mode));
  while (mode < hi && up(mode) > 1) mode++;
  while (mode > lo && down(mode) > 1) mode--;

  const threshold = logP(cc) + Math.log(RELATIVE_TOLERANCE);

  const parts: number[] = [];
  // Left tail: log P is non-decreasing on [lo, mode]; find the largest xl there with logP <= threshold.
  if (logP(lo) <= threshold) {
    let a = lo; // logP(a) <= threshold
    let b = mode; // candidate upper end
    if (logP(b) <= threshold) a = b;
    else {
      while (b - a > 1) {
        const mid = Math.floor((a + b) / 2);
        if (logP(mid) <= threshold) a = mid;
        else b = mid;
      }
    }
    parts.push(logTailSum(a, lo, logP(a), down, -1));
  }
  // Right tail: log P is non-increasing on [mode + 1, hi]; find the smallest xu with logP <= threshold.
  if (mode < hi && logP(hi) <= threshold) {
    let b = hi; // logP(b) <= threshold
    let a = mode + 1;
    if (logP(a) <= threshold) b = a;
    else {
      while (b - a > 1) {
        const mid = Math.floor((a + b) / 2);
        if (logP(mid) <= threshold) b = mid;
        else a = mid;
      }
    }
    parts.push(logTailSum(b, hi, logP(b), up, 1));
  }
  if (parts.length === 0) return 1; // unreachable: the observed table always qualifies
  const m = Math.max(...parts);
  if (m === -Infinity) return 0;
  let s = 0;
  for (const p of parts) s += Math.exp(p - m);
  const pValue = Math.exp(m + Math.log(s));
  return Math.min(1, Math.max(0, pValue));
}

/**
 * log of sum_{x = start, start+step, ..., end} P(x), with log P(start) = logStart and the
 * ratio P(x+step)/P(x) = ratio(x). Terms decrease away from the mode (log-concavity), so the
 * remainder after a term t with ratio r < 1 is at most t*r/(1-r).
 */
function logTailSum(start: number, end: number, logStart: number, ratio: (x: number) => number, step: 1 | -1): number {
  if (logStart === -Infinity) return -Infinity;
  let sum = 1;
  let term = 1;
  for (let x = start; x !== end; x += step) {
    const r = ratio(x);
    term *= r;
    sum += term;
    if (r < 1 && (term * r) / (1 - r) < sum * 1e-17) break;
    if (term === 0) break;
  }
  return logStart + Math.log(sum);
}
