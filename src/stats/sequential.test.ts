import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  confidenceSequenceTwoProportions,
  msprtFromCounts,
  msprtTwoProportions,
  runningMinimum,
} from './sequential.js';

describe('mSPRT', () => {
  it('does not overflow for huge samples (log space)', () => {
    const r = msprtTwoProportions({
      controlRate: 0.1,
      controlN: 1e9,
      treatmentRate: 0.12,
      treatmentN: 1e9,
      tauSquared: 0.001,
    });
    expect(r.likelihood_ratio).toBeNull();
    expect(r.log_likelihood_ratio!).toBeGreaterThan(1000);
    expect(r.always_valid_p).toBe(0);
    expect(r.reason).toBeNull();
  });

  it('degenerate inputs', () => {
    const zero = msprtTwoProportions({ controlRate: 0, controlN: 10, treatmentRate: 0, treatmentN: 10, tauSquared: 1e-3 });
    expect(zero).toMatchObject({ always_valid_p: 1, reason: 'zero_variance', z: null });
    const bad = msprtTwoProportions({ controlRate: 0.1, controlN: 0, treatmentRate: 0.2, treatmentN: 10, tauSquared: 1e-3 });
    expect(bad).toMatchObject({ always_valid_p: 1, reason: 'invalid_input' });
    expect(msprtFromCounts(0, 0, 0, 0, 1e-3).reason).toBe('invalid_input');
    expect(msprtFromCounts(10, 100, 20, 100, 0).reason).toBe('invalid_input');
    expect(confidenceSequenceTwoProportions({ controlRate: 1, controlN: 5, treatmentRate: 1, treatmentN: 5, tauSquared: 1e-3 }).reason).toBe(
      'zero_variance',
    );
    expect(
      confidenceSequenceTwoProportions({ controlRate: 0.1, controlN: 5, treatmentRate: 0.2, treatmentN: 5, tauSquared: 1e-3 }, 0)
        .reason,
    ).toBe('invalid_input');
  });

  it('counts helper matches rates', () => {
    const a = msprtFromCounts(500, 5000, 600, 5000, 0.001);
    expect(a.always_valid_p).toBeCloseTo(0.03761862264239397, 14);
  });

  it('confidence sequence excludes 0 exactly when p <= alpha, and is wider than the fixed-n CI', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 0.99, noNaN: true }),
        fc.double({ min: 0.01, max: 0.99, noNaN: true }),
        fc.integer({ min: 10, max: 10_000_000 }),
        fc.integer({ min: 10, max: 10_000_000 }),
        fc.double({ min: 1e-6, max: 0.1, noNaN: true }),
        fc.constantFrom(0.01, 0.05, 0.1),
        (pc, pt, nc, nt, tau2, alpha) => {
          const input = { controlRate: pc, controlN: nc, treatmentRate: pt, treatmentN: nt, tauSquared: tau2 };
          const m = msprtTwoProportions(input);
          const cs = confidenceSequenceTwoProportions(input, alpha);
          if (m.always_valid_p < 0 || m.always_valid_p > 1) return false;
          if (cs.lower === null || cs.upper === null || cs.half_width === null) return false;
          const excludesZero = cs.lower > 0 || cs.upper < 0;
          const margin = Math.abs(m.always_valid_p - alpha);
          if (margin > 1e-9 && excludesZero !== m.always_valid_p <= alpha) return false;
          const fixedHalf = 1.959963984540054 * Math.sqrt(m.variance!);
          return alpha !== 0.05 || cs.half_width >= fixedHalf;
        },
      ),
      { numRuns: 300 },
    );
  });

  it('runningMinimum', () => {
    expect(runningMinimum([0.5, 0.7, 0.2, NaN, 0.3, 0.1])).toEqual([0.5, 0.5, 0.2, 0.2, 0.2, 0.1]);
    expect(runningMinimum([])).toEqual([]);
    expect(runningMinimum([2])).toEqual([1]);
  });
});
