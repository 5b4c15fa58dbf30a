import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { summaryFromSd, summaryFromSums, welchTTest, type WelchResult } from './welch.js';

function noNaN(r: WelchResult): boolean {
  return Object.values(r).every((v) => v === null || typeof v === 'string' || Number.isFinite(v));
}

describe('welchTTest', () => {
  it('reproduces a SciPy ttest_ind_from_stats(equal_var=False) result with CI', () => {
    // scipy: t=2.0691705581731834, df=916.3611961039885, p=0.038809959159579493
    const r = welchTTest(summaryFromSd(500, 10, 2), summaryFromSd(480, 10.3, 2.5));
    expect(r.reason).toBeNull();
    expect(r.difference).toBeCloseTo(0.3, 12);
    expect(r.ci_lower!).toBeLessThan(0.3);
    expect(r.ci_upper!).toBeGreaterThan(0.3);
    // 95% CI excludes 0 exactly when p < 0.05
    expect(r.ci_lower!).toBeGreaterThan(0);
    expect((r.ci_upper! + r.ci_lower!) / 2).toBeCloseTo(0.3, 12);
  });

  it('summaryFromSums agrees with the two-pass formulas', () => {
    const ys = [1.5, 2.25, 3, 7.75, 0.5];
    const n = ys.length;
    const mean = ys.reduce((a, b) => a + b, 0) / n;
    const v = ys.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1);
    const s = summaryFromSums(
      n,
      ys.reduce((a, b) => a + b, 0),
      ys.reduce((a, b) => a + b * b, 0),
    );
    expect(s.mean).toBeCloseTo(mean, 14);
    expect(s.variance).toBeCloseTo(v, 12);
    expect(summaryFromSums(0, 0, 0)).toEqual({ n: 0, mean: 0, variance: 0 });
    expect(summaryFromSums(1, 4, 16)).toEqual({ n: 1, mean: 4, variance: 0 });
  });

  it('degenerate inputs give p = 1, a reason and no NaN', () => {
    const a = welchTTest({ n: 1, mean: 3, variance: 0 }, { n: 10, mean: 4, variance: 1 });
    expect(a).toMatchObject({ p_value: 1, reason: 'insufficient_data', difference: 1, t: null });
    const b = welchTTest({ n: 0, mean: 0, variance: 0 }, { n: 10, mean: 4, variance: 1 });
    expect(b).toMatchObject({ p_value: 1, reason: 'insufficient_data', difference: null });
    const c = welchTTest({ n: 5, mean: 2, variance: 0 }, { n: 5, mean: 3, variance: 0 });
    expect(c).toMatchObject({ p_value: 1, reason: 'zero_variance', difference: 1, ci_lower: null });
    const d = welchTTest({ n: 5, mean: NaN, variance: 1 }, { n: 5, mean: 3, variance: 1 });
    expect(d).toMatchObject({ p_value: 1, reason: 'invalid_input' });
    const e = welchTTest({ n: 5, mean: 1, variance: -1 }, { n: 5, mean: 3, variance: 1 });
    expect(e.reason).toBe('invalid_input');
    const f = welchTTest({ n: 5, mean: -1.7e308, variance: 1 }, { n: 5, mean: 1.7e308, variance: 1 });
    expect(f.reason).toBe('overflow');
    const g = welchTTest({ n: 5, mean: 1, variance: 1e-320 }, { n: 7, mean: 1, variance: 3e-321 });
    expect(g.reason).toBeNull();
    expect(g.p_value).toBe(1);
    for (const r of [a, b, c, d, e, f, g]) expect(noNaN(r)).toBe(true);
  });

  it('one zero-variance arm uses the other arm for df', () => {
    const r = welchTTest({ n: 8, mean: 1, variance: 0 }, { n: 12, mean: 2, variance: 4 });
    expect(r.df).toBeCloseTo(11, 12);
  });

  it('property: p in [0, 1], df within Welch bounds, no NaN', () => {
    const arm = fc.record({
      n: fc.integer({ min: 0, max: 1_000_000 }),
      mean: fc.double({ min: -1e6, max: 1e6, noNaN: true }),
      variance: fc.double({ min: 0, max: 1e6, noNaN: true }),
    });
    fc.assert(
      fc.property(arm, arm, fc.double({ min: 0.5, max: 0.999, noNaN: true }), (c, t, level) => {
        const r = welchTTest(c, t, level);
        if (!noNaN(r) || r.p_value < 0 || r.p_value > 1) return false;
        if (r.df !== null) {
          if (r.df < Math.min(c.n, t.n) - 1 - 1e-9 || r.df > c.n + t.n - 2 + 1e-9) return false;
        }
        if (r.ci_lower !== null && r.ci_upper !== null && r.difference !== null) {
          if (!(r.ci_lower <= r.difference && r.difference <= r.ci_upper)) return false;
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });
});
