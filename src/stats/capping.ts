/**
 * Capping (winsorization) of per-user metric values, applied before means, ratios and CUPED.
 *
 *   absolute:   cap = value
 *   percentile: cap = the p-th quantile of the pooled per-user values of every variant, p in (0, 1),
 *               by linear interpolation between order statistics (numpy's default `linear` method, Hyndman & Fan
 *               type 7; PostgreSQL's percentile_cont computes the same number):
 *                 sorted v_0 ≤ … ≤ v_{N−1},  h = (N − 1)·p,  j = ⌊h⌋,  cap = v_j + (h − j)·(v_{j+1} − v_j)
 *   capped value = min(value, cap); a user is "touched" when their value is strictly above the cap.
 *
 * Only the upper tail is capped: per-user aggregates (counts, revenue, durations) are outlier-prone upwards, as in
 * Statsig's winsorization and GrowthBook's capping. Invalid input (a non-finite value, a cap that is not a finite
 * number, p outside (0, 1)) gives null; no values gives cap null for a percentile cap and nothing touched.
 */
import { isOpenUnit } from './numeric.js';

export type Capping = { type: 'none' } | { type: 'absolute'; value: number } | { type: 'percentile'; p: number };

export interface CappedGroup {
  values: number[];
  /** users of this group whose value was above the cap */
  capped_count: number;
}

export interface CappingResult {
  /** the cap applied; null for `none` (and for a percentile cap of no values) */
  cap: number | null;
  groups: CappedGroup[];
  /** users touched, over every group */
  capped_count: number;
}

/** The p-th quantile of `values` by numpy's default (linear) method; null for no values or invalid input. */
export function quantileLinear(values: readonly number[], p: number): number | null {
  if (!(p >= 0 && p <= 1) || values.length === 0 || !values.every(Number.isFinite)) return null;
  return quantileOfSorted([...values].sort((a, b) => a - b), p);
}

/** As quantileLinear for values already sorted ascending (no checks). */
export function quantileOfSorted(sorted: ArrayLike<number>, p: number): number {
  return quantileOfOrdered(sorted.length, (i) => sorted[i], p);
}

/**
 * As quantileOfSorted for `n` values given by their order statistics (`at(i)`, the (i+1)-th smallest), which need
 * not be held in one array: e.g. sorted values with a run of zeros between the negative and the positive ones.
 */
export function quantileOfOrdered(n: number, at: (i: number) => number, p: number): number {
  const h = (n - 1) * p;
  const j = Math.floor(h);
  if (j + 1 >= n) return at(n - 1);
  const lower = at(j);
  const upper = at(j + 1);
  // numpy's _lerp: exact at both ends, and no overflow from upper − lower on huge values of opposite signs.
  const g = h - j;
  const value = g >= 0.5 ? upper - (upper - lower) * (1 - g) : lower + (upper - lower) * g;
  // upper − lower overflows only for values near ±1.8e308 of opposite signs; the convex combination cannot.
  return Number.isFinite(value) ? value : lower * (1 - g) + upper * g;
}

/** Caps the per-user values of every group (variant) at one cap: absolute, or the pooled percentile. */
export function capGroups(groups: readonly (readonly number[])[], capping: Capping): CappingResult | null {
  if (!groups.every((g) => g.every(Number.isFinite))) return null;
  let cap: number | null;
  if (capping.type === 'none') cap = null;
  else if (capping.type === 'absolute') {
    if (!Number.isFinite(capping.value)) return null;
    cap = capping.value;
  } else {
    if (!isOpenUnit(capping.p)) return null;
    const pooled = groups.flat();
    cap = pooled.length ? quantileOfSorted(pooled.sort((a, b) => a - b), capping.p) : null;
  }
  const capped = groups.map((g): CappedGroup => {
    if (cap === null) return { values: [...g], capped_count: 0 };
    const limit = cap;
    let count = 0;
    const values = g.map((v) => {
      if (v <= limit) return v;
      count += 1;
      return limit;
    });
    return { values, capped_count: count };
  });
  return { cap, groups: capped, capped_count: capped.reduce((sum, g) => sum + g.capped_count, 0) };
}
