import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  achievedPower,
  minimumDetectableEffect,
  runtimeDays,
  sampleSizeForEffect,
  sampleSizeTwoProportions,
  treatmentRateFor,
} from './power.js';

describe('power analysis', () => {
  it('sample size reasons', () => {
    expect(sampleSizeTwoProportions(0, 0.1).reason).toBe('invalid_rate');
    expect(sampleSizeTwoProportions(1, 0.1).reason).toBe('invalid_rate');
    expect(sampleSizeTwoProportions(0.6, 1).reason).toBe('rate_out_of_range');
    expect(sampleSizeForEffect(0.6, 0.7, 'relative').reason).toBe('rate_out_of_range'); // 1.02 >= 1
    expect(sampleSizeForEffect(0.5, 0.5, 'absolute').reason).toBe('rate_out_of_range');
    expect(sampleSizeTwoProportions(0.1, 0.1).reason).toBe('zero_effect');
    expect(sampleSizeTwoProportions(0.1, 0.12, 0).reason).toBe('invalid_alpha');
    expect(sampleSizeTwoProportions(0.1, 0.12, 0.05, 1).reason).toBe('invalid_power');
    expect(sampleSizeTwoProportions(0.1, 0.12, 0.05, 0.001).reason).toBe('invalid_power');
    expect(sampleSizeTwoProportions(0.1, 0.1 + 1e-12).reason).toBe('out_of_range');
    expect(sampleSizeTwoProportions(NaN, 0.1).reason).toBe('invalid_input');
    const ok = sampleSizeForEffect(0.05, 0.1, 'relative');
    expect(ok.reason).toBeNull();
    expect(ok.value!.n_per_variant).toBe(31234);
  });

  it('treatmentRateFor', () => {
    expect(treatmentRateFor(0.1, 0.2, 'relative')).toBeCloseTo(0.12, 15);
    expect(treatmentRateFor(0.1, 0.02, 'absolute')).toBeCloseTo(0.12, 15);
  });

  it('achieved power inverts the sample size, and the MDE inverts the power', () => {
    const n = sampleSizeTwoProportions(0.1, 0.12, 0.05, 0.8).value!.n_per_variant_unrounded;
    expect(achievedPower(0.1, 0.12, n).value!).toBeCloseTo(0.8, 10);
    const mde = minimumDetectableEffect(0.1, n, 0.05, 0.8).value!;
    expect(mde.absolute).toBeCloseTo(0.02, 9);
    expect(mde.treatment_rate).toBeCloseTo(0.12, 9);
    expect(mde.relative).toBeCloseTo(0.2, 8);
    const down = minimumDetectableEffect(0.1, n, 0.05, 0.8, 'decrease').value!;
    expect(down.treatment_rate).toBeLessThan(0.1);
    expect(achievedPower(0.1, down.treatment_rate, n).value!).toBeCloseTo(0.8, 8);
  });

  it('MDE / power edge cases', () => {
    expect(minimumDetectableEffect(0.1, 0).reason).toBe('not_reachable');
    expect(minimumDetectableEffect(0.1, 3).reason).toBe('not_reachable');
    expect(minimumDetectableEffect(0.1, -1).reason).toBe('invalid_input');
    expect(achievedPower(0.1, 0.1, 1000).value!).toBeCloseTo(0.025, 12);
    expect(achievedPower(0.1, 0.2, 0).value!).toBeGreaterThan(0);
    expect(achievedPower(0.1, 1.2, 10).reason).toBe('rate_out_of_range');
  });

  it('runtime in days', () => {
    expect(runtimeDays({ nPerVariant: 1000, dailyTraffic: 500 })).toEqual({ value: 4, reason: null });
    expect(runtimeDays({ nPerVariant: 1000, dailyTraffic: 500, variantCount: 3 }).value).toBe(6);
    expect(runtimeDays({ nPerVariant: 1000, dailyTraffic: 1000, allocationPercent: [80, 20] }).value).toBe(5);
    expect(runtimeDays({ nPerVariant: 1000, dailyTraffic: 1000, trafficShare: 0.5 }).value).toBe(4);
    expect(runtimeDays({ nPerVariant: 1000, dailyTraffic: 0 }).reason).toBe('no_traffic');
    expect(runtimeDays({ nPerVariant: 1000, dailyTraffic: 10, allocationPercent: [0, 0] }).reason).toBe('no_traffic');
    expect(runtimeDays({ nPerVariant: 1000, dailyTraffic: 10, allocationPercent: [100, 0] }).reason).toBe('no_traffic');
    expect(runtimeDays({ nPerVariant: 0, dailyTraffic: 0 }).value).toBe(0);
    expect(runtimeDays({ nPerVariant: 1e300, dailyTraffic: 1e-300 }).reason).toBe('out_of_range');
    expect(runtimeDays({ nPerVariant: NaN, dailyTraffic: 1 }).reason).toBe('invalid_input');
  });

  it('property: sample size is decreasing in the MDE and never NaN', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.001, max: 0.9, noNaN: true }),
        fc.double({ min: 0.01, max: 2, noNaN: true }),
        fc.double({ min: 1.01, max: 3, noNaN: true }),
        fc.constantFrom(0.01, 0.05, 0.1),
        fc.constantFrom(0.8, 0.9, 0.95),
        (p1, mde, factor, alpha, power) => {
          const a = sampleSizeForEffect(p1, mde, 'relative', alpha, power);
          const b = sampleSizeForEffect(p1, mde * factor, 'relative', alpha, power);
          if (a.value === null) return a.reason === 'rate_out_of_range' && b.reason === 'rate_out_of_range';
          if (b.value === null) return b.reason === 'rate_out_of_range';
          return (
            Number.isFinite(a.value.n_per_variant_unrounded) &&
            b.value.n_per_variant_unrounded < a.value.n_per_variant_unrounded
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('property: power in [0, 1] and increasing in n', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.001, max: 0.999, noNaN: true }),
        fc.double({ min: 0.001, max: 0.999, noNaN: true }),
        fc.double({ min: 0, max: 1e9, noNaN: true }),
        (p1, p2, n) => {
          const a = achievedPower(p1, p2, n).value!;
          const b = achievedPower(p1, p2, n * 2 + 1).value!;
          return a >= 0 && a <= 1 && (p1 === p2 || b >= a);
        },
      ),
    );
  });
});
