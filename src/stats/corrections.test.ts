import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { adjust, benjaminiHochberg, bonferroni, CORRECTION_METHODS, holm } from './corrections.js';

const pValues = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 0, maxLength: 40 });

describe('multiple-testing corrections', () => {
  it('edge cases: empty, single, NaN and out-of-range inputs', () => {
    for (const m of CORRECTION_METHODS) {
      expect(adjust([], m)).toEqual([]);
      expect(adjust([0.03], m)).toEqual([0.03]);
    }
    expect(bonferroni([NaN, 0.01])).toEqual([1, 0.02]);
    expect(holm([-0.5, 2])).toEqual([0, 1]);
    expect(adjust([0.2, NaN], 'none')).toEqual([0.2, 1]);
  });

  it('ties keep equal adjusted values', () => {
    expect(holm([0.01, 0.01, 0.5])).toEqual([0.03, 0.03, 0.5]);
    expect(benjaminiHochberg([0.01, 0.01, 0.5])).toEqual([0.015, 0.015, 0.5]);
  });

  it('properties: in [p, 1], order-preserving, BH <= Holm <= Bonferroni', () => {
    fc.assert(
      fc.property(pValues, (p) => {
        const bon = bonferroni(p);
        const hol = holm(p);
        const bh = benjaminiHochberg(p);
        for (const adj of [bon, hol, bh]) {
          if (adj.length !== p.length) return false;
          for (let i = 0; i < p.length; i++) {
            if (!(adj[i] >= p[i] - 1e-15 && adj[i] <= 1)) return false;
            for (let j = 0; j < p.length; j++) if (p[i] <= p[j] && adj[i] > adj[j] + 1e-15) return false;
          }
        }
        for (let i = 0; i < p.length; i++) {
          if (bh[i] > hol[i] + 1e-15 || hol[i] > bon[i] + 1e-15) return false;
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });

  it('adjust dispatches to each method', () => {
    const p = [0.01, 0.04, 0.03];
    expect(adjust(p, 'bonferroni')).toEqual(bonferroni(p));
    expect(adjust(p, 'holm')).toEqual(holm(p));
    expect(adjust(p, 'benjamini_hochberg')).toEqual(benjaminiHochberg(p));
    expect(adjust(p, 'none')).toEqual(p);
  });
});
