import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareProportions } from './proportions.js';

describe('compareProportions', () => {
  it('absolute and relative intervals (delta method)', () => {
    const r = compareProportions(100, 1000, 120, 1000)!;
    expect(r.control_rate).toBe(0.1);
    expect(r.treatment_rate).toBe(0.12);
    expect(r.absolute_difference).toBeCloseTo(0.02, 15);
    const se = Math.sqrt((0.1 * 0.9) / 1000 + (0.12 * 0.88) / 1000);
    expect(r.absolute_std_error).toBeCloseTo(se, 15);
    expect(r.absolute_ci![0]).toBeCloseTo(0.02 - 1.959963984540054 * se, 12);
    expect(r.relative_lift).toBeCloseTo(0.2, 14);
    const seRel = Math.sqrt((0.12 * 0.88) / 1000 / 0.01 + (0.0144 * (0.1 * 0.9)) / 1000 / 1e-4);
    expect(r.relative_std_error).toBeCloseTo(seRel, 12);
    expect(r.relative_ci![1]).toBeCloseTo(0.2 + 1.959963984540054 * seRel, 12);
    // SciPy: z = 1.4300313895335042, 2 * norm.sf(z)
    expect(r.z).toBeCloseTo(1.4300313895335042, 12);
    expect(Math.abs(r.p_value - 0.15270801019387775) / 0.15270801019387775).toBeLessThan(1e-12);
  });

  it('degenerate inputs', () => {
    expect(compareProportions(5, 4, 1, 10)).toBeNull();
    expect(compareProportions(-1, 4, 1, 10)).toBeNull();
    const zero = compareProportions(0, 1000, 0, 1000)!;
    expect(zero).toMatchObject({ absolute_difference: 0, absolute_ci: null, relative_lift: null, z: null, p_value: 1 });
    const empty = compareProportions(0, 0, 5, 10)!;
    expect(empty).toMatchObject({ control_rate: null, treatment_rate: 0.5, p_value: 1, absolute_difference: null });
    const noLevel = compareProportions(10, 100, 20, 100, 1)!;
    expect(noLevel.absolute_ci).toBeNull();
    expect(noLevel.p_value).toBeGreaterThan(0);
  });

  it('property: total, CI contains the estimate, p-value consistent with CI', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (nc, nt, rc, rt) => {
          const r = compareProportions(Math.round(nc * rc), nc, Math.round(nt * rt), nt)!;
          if (/NaN|Infinity/.test(JSON.stringify(r)) || r.p_value < 0 || r.p_value > 1) return false;
          if (r.absolute_ci && r.absolute_difference !== null) {
            const [lo, hi] = r.absolute_ci;
            if (!(lo <= r.absolute_difference && r.absolute_difference <= hi)) return false;
            const excludes = lo > 0 || hi < 0;
            if (Math.abs(r.p_value - 0.05) > 1e-9 && excludes !== r.p_value < 0.05) return false;
          }
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });
});
