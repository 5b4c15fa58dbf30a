/** Ratio, capping and quantile metrics: properties (fast-check) and degenerate cases. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { capGroups, quantileLinear } from './capping.js';
import { compareQuantiles, quantileRanks, quantileSummary } from './quantile.js';
import { compareRatios, ratioArm, type RatioStats } from './ratio.js';
import { summaryFromSums, welchTTest } from './welch.js';

const value = fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true });
const values = fc.array(value, { minLength: 0, maxLength: 60 });
const userValues = fc.array(fc.double({ min: 0, max: 1e4, noNaN: true, noDefaultInfinity: true }), { minLength: 2, maxLength: 80 });

function stats(x: number[], y: number[]): RatioStats {
  let s = { n: x.length, sum_x: 0, sum_y: 0, sum_x2: 0, sum_y2: 0, sum_xy: 0 };
  x.forEach((xi, i) => {
    const yi = y[i];
    s = { ...s, sum_x: s.sum_x + xi, sum_y: s.sum_y + yi, sum_x2: s.sum_x2 + xi * xi, sum_y2: s.sum_y2 + yi * yi, sum_xy: s.sum_xy + xi * yi };
  });
  return s;
}
const relClose = (a: number | null, b: number | null) =>
  a === null || b === null ? a === b : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

describe('capping', () => {
  it('a cap above every value changes nothing (absolute, and a percentile of values all equal)', () => {
    fc.assert(
      fc.property(fc.array(values, { minLength: 1, maxLength: 3 }), fc.double({ min: 0, max: 1e6, noNaN: true }), (groups, extra) => {
        const top = Math.max(-Infinity, ...groups.flat());
        const r = capGroups(groups, { type: 'absolute', value: (Number.isFinite(top) ? top : 0) + extra })!;
        expect(r.capped_count).toBe(0);
        r.groups.forEach((g, i) => expect(g.values).toEqual(groups[i]));
      }),
    );
  });

  it('never raises a value, touches exactly the values above the cap, and a percentile cap is the pooled quantile', () => {
    fc.assert(
      fc.property(fc.array(values, { minLength: 1, maxLength: 3 }), fc.double({ min: 0.01, max: 0.99, noNaN: true }), (groups, p) => {
        const r = capGroups(groups, { type: 'percentile', p })!;
        const pooled = groups.flat();
        if (pooled.length === 0) {
          expect(r.cap).toBeNull();
          return;
        }
        expect(r.cap).toBe(quantileLinear(pooled, p));
        const cap = r.cap!;
        r.groups.forEach((g, i) => {
          g.values.forEach((v, j) => expect(v).toBe(Math.min(groups[i][j], cap)));
          expect(g.capped_count).toBe(groups[i].filter((v) => v > cap).length);
        });
      }),
    );
  });

  it('numpy linear quantile on a small list; invalid input is null', () => {
    expect(quantileLinear([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileLinear([10, 1, 7], 0.25)).toBe(4);
    expect(quantileLinear([5], 0.9)).toBe(5);
    expect(quantileLinear([], 0.5)).toBeNull();
    expect(capGroups([[1, NaN]], { type: 'absolute', value: 1 })).toBeNull();
    expect(capGroups([[1]], { type: 'percentile', p: 1 })).toBeNull();
    expect(capGroups([[1, 5]], { type: 'none' })).toEqual({ cap: null, groups: [{ values: [1, 5], capped_count: 0 }], capped_count: 0 });
  });
});

describe('ratio metrics (delta method)', () => {
  it('with the denominator 1 for every user, is Welch\'s test of the means', () => {
    fc.assert(
      fc.property(userValues, userValues, fc.double({ min: 0.5, max: 0.99, noNaN: true }), (xc, xt, level) => {
        const r = compareRatios(stats(xc, xc.map(() => 1)), stats(xt, xt.map(() => 1)), level);
        const sc = stats(xc, xc.map(() => 1));
        const st = stats(xt, xt.map(() => 1));
        const w = welchTTest(summaryFromSums(sc.n, sc.sum_x, sc.sum_x2), summaryFromSums(st.n, st.sum_x, st.sum_x2), level);
        expect(r.reason).toBe(w.reason === 'zero_variance' ? 'zero_variance' : w.reason);
        for (const k of ['difference', 'std_error', 't', 'df', 'p_value', 'ci_lower', 'ci_upper'] as const) {
          expect(relClose(r[k], w[k])).toBe(true);
        }
      }),
    );
  });

  it('p-value in [0, 1]; swapping the arms negates the difference and keeps the p-value', () => {
    const arm = fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 1, max: 20 })), { minLength: 2, maxLength: 40 });
    fc.assert(
      fc.property(arm, arm, (a, b) => {
        const sa = stats(a.map((u) => u[0]), a.map((u) => u[1]));
        const sb = stats(b.map((u) => u[0]), b.map((u) => u[1]));
        const r = compareRatios(sa, sb);
        const s = compareRatios(sb, sa);
        expect(r.p_value).toBeGreaterThanOrEqual(0);
        expect(r.p_value).toBeLessThanOrEqual(1);
        expect(relClose(r.p_value, s.p_value)).toBe(true);
        expect(relClose(r.difference, s.difference === null ? null : -s.difference)).toBe(true);
        if (r.ci_lower !== null && r.p_value < 0.05) expect(r.ci_lower > 0 || r.ci_upper! < 0).toBe(true);
      }),
    );
  });

  it('degenerate arms', () => {
    const ok = { n: 10, sum_x: 10, sum_y: 20, sum_x2: 14, sum_y2: 44, sum_xy: 22 };
    expect(compareRatios({ ...ok, sum_x2: -1 }, ok).reason).toBe('invalid_input');
    expect(compareRatios({ ...ok, n: 1.5 }, ok).reason).toBe('invalid_input');
    const noDenominator = compareRatios({ n: 5, sum_x: 3, sum_y: 0, sum_x2: 3, sum_y2: 0, sum_xy: 0 }, ok);
    expect(noDenominator).toMatchObject({ reason: 'insufficient_data', p_value: 1, difference: null });
    expect(compareRatios({ n: 1, sum_x: 1, sum_y: 2, sum_x2: 1, sum_y2: 4, sum_xy: 2 }, ok)).toMatchObject({
      reason: 'insufficient_data', p_value: 1, difference: 0,
    });
    const flat = { n: 4, sum_x: 4, sum_y: 8, sum_x2: 4, sum_y2: 16, sum_xy: 8 };
    expect(compareRatios(flat, flat)).toMatchObject({ reason: 'zero_variance', p_value: 1, difference: 0, relative_lift: 0 });
    const zeroControl = compareRatios({ n: 4, sum_x: 0, sum_y: 8, sum_x2: 0, sum_y2: 18, sum_xy: 0 }, ok);
    expect(zeroControl.relative_lift).toBeNull();
    expect(zeroControl.relative_ci_lower).toBeNull();
    expect(zeroControl.ci_lower).not.toBeNull();
    expect(ratioArm({ n: 0, sum_x: 0, sum_y: 0, sum_x2: 0, sum_y2: 0, sum_xy: 0 })).toEqual({ n: 0, mean_x: 0, mean_y: 0, ratio: null, variance: null });
  });
});

describe('quantile metrics', () => {
  it('ranks stay inside 1..n, around np, and are null when the tail is out of reach', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.double({ min: 0.01, max: 0.99, noNaN: true }), (n, p) => {
        const r = quantileRanks(n, p, 0.95);
        if (r === null) return;
        expect(r.lower).toBeGreaterThanOrEqual(1);
        expect(r.upper).toBeLessThanOrEqual(n);
        expect(r.lower).toBeLessThanOrEqual(n * p);
        expect(r.upper).toBeGreaterThanOrEqual(n * p);
      }),
    );
    expect(quantileRanks(100, 0.99, 0.95)).toBeNull();
    expect(quantileRanks(1000, 0.99, 0.95)).toEqual({ lower: 983, upper: 997 });
  });

  it('identical arms: difference 0 and p-value 1; swapping arms negates the difference', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1e3, noNaN: true }), { minLength: 50, maxLength: 200 }), userValues, (a, b) => {
        const s = quantileSummary(a, 0.5)!;
        const same = compareQuantiles(s, s, 0.5);
        expect(same.difference).toBe(0);
        expect(same.p_value).toBe(1);
        const other = quantileSummary(b, 0.5)!;
        const ab = compareQuantiles(s, other, 0.5);
        const ba = compareQuantiles(other, s, 0.5);
        expect(ab.p_value).toBe(ba.p_value);
        expect(ab.difference).toBe(-ba.difference!);
      }),
    );
  });

  it('degenerate cases', () => {
    const few = quantileSummary([1, 2, 3], 0.9)!;
    expect(few).toEqual({ n: 3, quantile: 2.8, lower: null, upper: null });
    expect(compareQuantiles(few, few, 0.9)).toMatchObject({ reason: 'insufficient_data', p_value: 1, difference: 0 });
    const ties = quantileSummary(Array.from({ length: 200 }, () => 7), 0.5)!;
    expect(compareQuantiles(ties, ties, 0.5)).toMatchObject({ reason: 'zero_variance', p_value: 1 });
    expect(compareQuantiles({ n: 0, quantile: 1, lower: 1, upper: 2 }, ties, 0.5).reason).toBe('invalid_input');
    expect(compareQuantiles(ties, ties, 1).reason).toBe('invalid_input');
    expect(quantileSummary([], 0.5)).toBeNull();
    const zero = quantileSummary(Array.from({ length: 100 }, (_, i) => (i < 60 ? 0 : i)), 0.5)!;
    expect(compareQuantiles(zero, ties, 0.5).relative_difference).toBeNull();
  });
});
