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
