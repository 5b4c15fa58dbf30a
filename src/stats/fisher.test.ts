import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fisherExactTwoSided } from './fisher.js';

/** Straightforward reference: full support, log-factorials by summation, R's rule, normalised. */
function bruteForce(cc: number, cn: number, tc: number, tn: number): number {
  const lf: number[] = [0];
  for (let i = 1; i <= cn + tn + 1; i++) lf[i] = lf[i - 1] + Math.log(i);
  const k = cc + tc;
  const lo = Math.max(0, k - tn);
  const hi = Math.min(k, cn);
  const logp = (x: number): number => lf[cn] - lf[x] - lf[cn - x] + lf[tn] - lf[k - x] - lf[tn - k + x];
  const ds: number[] = [];
  for (let x = lo; x <= hi; x++) ds.push(logp(x));
  const m = Math.max(...ds);
  const w = ds.map((v) => Math.exp(v - m));
  const total = w.reduce((a, b) => a + b, 0);
  const obs = w[cc - lo];
  let s = 0;
  for (const v of w) if (v <= obs * (1 + 1e-7)) s += v;
  return s / total;
}

describe('fisherExactTwoSided', () => {
  it('matches high-precision (mpmath, 40 digits) values for tables in the millions', () => {
    const p = fisherExactTwoSided(300000, 1000000, 310000, 1000000)!;
    expect(Math.abs(p - 3.179224824586888406e-53) / 3.179224824586888406e-53).toBeLessThan(1e-9);
    const p2 = fisherExactTwoSided(3000000, 10000000, 3001000, 10000000)!;
    expect(Math.abs(p2 - 0.6259473493669878301) / 0.6259473493669878301).toBeLessThan(1e-9);
  });

  it('handles extreme and degenerate tables', () => {
    expect(fisherExactTwoSided(0, 1000000, 1000000, 1000000)).toBe(0);
    expect(fisherExactTwoSided(0, 0, 5, 10)).toBe(1); // empty arm
    expect(fisherExactTwoSided(0, 10, 0, 10)).toBe(1); // no conversions
    expect(fisherExactTwoSided(10, 10, 10, 10)).toBe(1); // all converted
    expect(fisherExactTwoSided(5, 10, 5, 10)).toBeCloseTo(1, 12);
    // Billions of users: the sum runs over the mass near the mode only (a full sum would not finish).
    const p = fisherExactTwoSided(2e9, 4e9, 2.0001e9, 4e9)!;
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(1);
  });

  it('returns null for invalid tables', () => {
    expect(fisherExactTwoSided(-1, 10, 2, 10)).toBeNull();
    expect(fisherExactTwoSided(11, 10, 2, 10)).toBeNull();
    expect(fisherExactTwoSided(1.5, 10, 2, 10)).toBeNull();
    expect(fisherExactTwoSided(NaN, 10, 2, 10)).toBeNull();
    expect(fisherExactTwoSided(1, Infinity, 2, 10)).toBeNull();
  });

  const table = fc
    .tuple(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 0, max: 120 }))
    .chain(([cn, tn]) => fc.tuple(fc.integer({ min: 0, max: cn }), fc.constant(cn), fc.integer({ min: 0, max: tn }), fc.constant(tn)));

  it('agrees with a brute-force implementation on small tables', () => {
    fc.assert(
      fc.property(table, ([cc, cn, tc, tn]) => {
        const p = fisherExactTwoSided(cc, cn, tc, tn)!;
        const ref = bruteForce(cc, cn, tc, tn);
        return Math.abs(p - ref) <= 1e-12 * Math.max(ref, 1e-300) + 1e-15;
      }),
      { numRuns: 300 },
    );
  });

  it('is a probability and symmetric under swapping arms or outcome labels', () => {
    fc.assert(
      fc.property(table, ([cc, cn, tc, tn]) => {
        const p = fisherExactTwoSided(cc, cn, tc, tn)!;
        const swapped = fisherExactTwoSided(tc, tn, cc, cn)!;
        const flipped = fisherExactTwoSided(cn - cc, cn, tn - tc, tn)!;
        const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-12 * Math.max(a, b) + 1e-300;
        return p >= 0 && p <= 1 && close(p, swapped) && close(p, flipped);
      }),
      { numRuns: 300 },
    );
  });

  it('is symmetric for large random tables too', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5_000_000 }),
        fc.integer({ min: 1, max: 5_000_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0.9, max: 1.1, noNaN: true }),
        (cn, tn, rate, lift) => {
          const cc = Math.round(cn * rate);
          const tc = Math.min(tn, Math.round(tn * rate * lift));
          const p = fisherExactTwoSided(cc, cn, tc, tn)!;
          const q = fisherExactTwoSided(tc, tn, cc, cn)!;
          return p >= 0 && p <= 1 && Math.abs(p - q) <= 1e-9 * Math.max(p, q) + 1e-300;
        },
      ),
      { numRuns: 60 },
    );
  });
});
