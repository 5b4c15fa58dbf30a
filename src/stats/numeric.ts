/** Small numeric guards shared by the stats modules (internal; not re-exported). */

/** The value if it is a finite number, else null (so it can go to JSON safely). */
export function finiteOrNull(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}

/** A non-negative integer that is exactly representable. */
export function isCount(v: number): boolean {
  return Number.isInteger(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER;
}

/** A probability / confidence level strictly inside (0, 1). */
export function isOpenUnit(v: number): boolean {
  return Number.isFinite(v) && v > 0 && v < 1;
}
