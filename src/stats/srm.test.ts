import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { srmChiSquare, SRM_P_THRESHOLD } from './srm.js';

describe('srmChiSquare', () => {
  it('threshold constant', () => {
    expect(SRM_P_THRESHOLD).toBe(0.001);
  });

  it('flags a clear mismatch and passes a balanced split', () => {
    expect(srmChiSquare([1000, 1200], [50, 50])!.srm).toBe(true);
    const ok = srmChiSquare([5000, 5000], [50, 50])!;
    expect(ok).toMatchObject({ statistic: 0, p_value: 1, df: 1, srm: false });
    expect(ok.expected).toEqual([5000, 5000]);
  });

  it('returns null when it cannot test', () => {
    expect(srmChiSquare([100], [100])).toBeNull();
    expect(srmChiSquare([], [])).toBeNull();
    expect(srmChiSquare([0, 0], [50, 50])).toBeNull();
    expect(srmChiSquare([10, 10], [50])).toBeNull();
    expect(srmChiSquare([10, -1], [50, 50])).toBeNull();
    expect(srmChiSquare([10, 1.5], [50, 50])).toBeNull();
    expect(srmChiSquare([10, 10], [0, 0])).toBeNull();
    expect(srmChiSquare([10, 10], [50, NaN])).toBeNull();
    expect(srmChiSquare([10, 0], [100, 0])).toBeNull(); // only one variant in play
  });

  it('zero-allocation variants: ignored when empty, certain mismatch when not', () => {
    const r = srmChiSquare([500, 500, 0], [50, 50, 0])!;
    expect(r).toMatchObject({ df: 1, p_value: 1, srm: false });
    const bad = srmChiSquare([500, 500, 3], [50, 50, 0])!;
    expect(bad).toMatchObject({ statistic: null, p_value: 0, df: 2, srm: true });
  });

  it('property: p in [0, 1]; observed == expected gives p = 1', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 2, maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 8, maxLength: 8 }),
        (obs, w) => {
          const r = srmChiSquare(obs, w.slice(0, obs.length));
          if (obs.every((o) => o === 0)) return r === null;
          return r !== null && r.p_value >= 0 && r.p_value <= 1 && (r.statistic === null || Number.isFinite(r.statistic));
        },
      ),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 10_000 }), { minLength: 2, maxLength: 8 }),
        fc.integer({ min: 1, max: 1000 }),
        (units, scale) => {
          // observed exactly proportional to the allocation
          const r = srmChiSquare(
            units.map((u) => u * scale),
            units,
          )!;
          return r.p_value > 1 - 1e-9 && r.srm === false;
        },
      ),
    );
  });
});
