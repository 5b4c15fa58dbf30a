/** Small numeric guards shared by the stats modules; `finiteOrNull` is also exported from the index. */

/** The value if it is a finite number, else null (so it can go to JSON safely): the one such guard of the code base. */
export function finiteOrNull(v: number | null | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** A non-negative integer that is exactly representable. */
export function isCount(v: number): boolean {
  return Number.isInteger(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER;
}

/** A probability / confidence level strictly inside (0, 1). */
export function isOpenUnit(v: number): boolean {
  return Number.isFinite(v) && v > 0 && v < 1;
}

/**
 * Welch–Satterthwaite degrees of freedom for the sum of two variances of means va and vb (from na and nb units),
 * computed on the variances scaled by their maximum so that it can neither underflow nor overflow; it always lies in
 * [min(n) − 1, na + nb − 2]. Needs va + vb > 0 and both n ≥ 2.
 */
export function satterthwaiteDf(va: number, na: number, vb: number, nb: number): number {
  const m = Math.max(va, vb);
  const a = va / m;
  const b = vb / m;
  return ((a + b) * (a + b)) / ((a * a) / (na - 1) + (b * b) / (nb - 1));
}

/** centre ± half, or both ends null when either is not finite. */
export function symmetricInterval(centre: number, half: number): [number | null, number | null] {
  const lower = finiteOrNull(centre - half);
  const upper = finiteOrNull(centre + half);
  return lower === null || upper === null ? [null, null] : [lower, upper];
}
