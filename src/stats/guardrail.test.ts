import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { guardrailMsprt, type GuardrailDirection, type GuardrailSample } from './guardrail.js';
import { mulberry32 } from './thompson.js';

/** Knuth's Poisson sampler (small means only). */
function poisson(rand: () => number, mean: number): number {
  const limit = Math.exp(-mean);
  let k = 0;
  let p = rand();
  while (p > limit) {
    k += 1;
    p *= rand();
  }
  return k;
}

function addUsers(sample: GuardrailSample, rand: () => number, mean: number, users: number): void {
  for (let i = 0; i < users; i++) {
    const x = poisson(rand, mean);
    sample.n += 1;
    sample.sum += x;
    sample.sum_squares += x * x;
  }
}

const empty = (): GuardrailSample => ({ n: 0, sum: 0, sum_squares: 0 });

/**
 * One monitored stage: `looks` times, `usersPerLook` more users arrive in each sample (per-user counts of the
 * guardrail event, Poisson), and the decision is taken again. Returns the look at which a degradation was first
 * declared, or -1.
 */
function monitor(seed: number, baselineMean: number, treatmentMean: number, direction: GuardrailDirection, confidence: number, looks: number, usersPerLook: number): number {
  const rand = mulberry32(seed);
  const baseline = empty();
  const treatment = empty();
  for (let look = 0; look < looks; look++) {
    addUsers(baseline, rand, baselineMean, usersPerLook);
    addUsers(treatment, rand, treatmentMean, usersPerLook);
    if (guardrailMsprt({ baseline, treatment, direction, confidence }).degraded) return look;
  }
  return -1;
}

const direction = fc.constantFrom<GuardrailDirection>('lower_is_better', 'higher_is_better');

/** A consistent sample: n users whose values have this mean and (population) variance. */
const sample = fc
  .record({ n: fc.integer({ min: 0, max: 100_000 }), mean: fc.double({ min: -50, max: 50, noNaN: true }), variance: fc.double({ min: 0, max: 100, noNaN: true }) })
  .map(({ n, mean, variance }) => ({ n, sum: n * mean, sum_squares: n * (variance + mean * mean) }));

describe('guardrailMsprt', () => {
  it('controls false alarms under identical rates, however often it is looked at', () => {
    const SIMULATIONS = 150;
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 3, noNaN: true }),
        fc.constantFrom(0.8, 0.9, 0.95),
        direction,
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        (mean, confidence, dir, seed) => {
          let alarms = 0;
          for (let s = 0; s < SIMULATIONS; s++) if (monitor(seed + s * 7_919, mean, mean, dir, confidence, 20, 100) >= 0) alarms += 1;
          const alpha = 1 - confidence;
          // At most alpha, with three standard errors of the simulation's own noise.
          return alarms / SIMULATIONS <= alpha + 3 * Math.sqrt((alpha * (1 - alpha)) / SIMULATIONS);
        },
      ),
      { numRuns: 6, seed: 190_004 },
    );
  });

  it('detects a real degradation eventually, in the harmful direction only', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 3, noNaN: true }),
        fc.double({ min: 0.3, max: 1, noNaN: true }),
        fc.constantFrom(0.9, 0.95, 0.99),
        direction,
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        (mean, change, confidence, dir, seed) => {
          const worse = dir === 'lower_is_better' ? mean * (1 + change) : mean * (1 - change * 0.6);
          const better = dir === 'lower_is_better' ? mean * (1 - change * 0.6) : mean * (1 + change);
          return monitor(seed, mean, worse, dir, confidence, 100, 200) >= 0 && monitor(seed, mean, better, dir, confidence, 100, 200) === -1;
        },
      ),
      { numRuns: 20, seed: 190_005 },
    );
  });

  it('is monotone in the confidence: a degradation at a higher confidence is one at every lower confidence', () => {
    fc.assert(
      fc.property(sample, sample, direction, fc.double({ min: 0.5, max: 0.9999, noNaN: true }), fc.double({ min: 0.5, max: 0.9999, noNaN: true }), (baseline, treatment, dir, c1, c2) => {
        const [low, high] = c1 <= c2 ? [c1, c2] : [c2, c1];
        const atHigh = guardrailMsprt({ baseline, treatment, direction: dir, confidence: high });
        const atLow = guardrailMsprt({ baseline, treatment, direction: dir, confidence: low });
        return !atHigh.degraded || atLow.degraded;
      }),
      { numRuns: 500 },
    );
  });

  it('is symmetric in the direction: mirroring the values mirrors the decision', () => {
    const mirror = (s: GuardrailSample): GuardrailSample => ({ n: s.n, sum: -s.sum, sum_squares: s.sum_squares });
    fc.assert(
      fc.property(sample, sample, fc.double({ min: 0.5, max: 0.999, noNaN: true }), (baseline, treatment, confidence) => {
        const lower = guardrailMsprt({ baseline, treatment, direction: 'lower_is_better', confidence });
        const higher = guardrailMsprt({ baseline: mirror(baseline), treatment: mirror(treatment), direction: 'higher_is_better', confidence });
        return lower.degraded === higher.degraded;
      }),
      { numRuns: 300 },
    );
  });

  it('matches the formula on a worked example', () => {
    // baseline: 1,000 users, mean 0.10, variance 0.10; treatment: 1,000 users, mean 0.20, variance 0.20
    const b = { n: 1000, sum: 100, sum_squares: 0.1 * 999 + 1000 * 0.01 };
    const t = { n: 1000, sum: 200, sum_squares: 0.2 * 999 + 1000 * 0.04 };
    const r = guardrailMsprt({ baseline: b, treatment: t, direction: 'lower_is_better', confidence: 0.95 });
    const v = 0.1 / 1000 + 0.2 / 1000;
    const tau2 = 0.15 / 400;
    const expected = -0.5 * Math.log(1 + tau2 / v) + (tau2 / (v + tau2)) * (0.1 * 0.1) / (2 * v);
    expect(r.log_likelihood_ratio).toBeCloseTo(expected, 10);
    expect(r.z).toBeCloseTo(0.1 / Math.sqrt(v), 10);
    expect(r.log_threshold).toBeCloseTo(Math.log(20), 12);
    expect(r).toMatchObject({ degraded: true, difference: expect.closeTo(0.1, 12), relative_difference: expect.closeTo(1, 12), reason: null });
    expect(guardrailMsprt({ baseline: b, treatment: t, direction: 'higher_is_better', confidence: 0.95 }).degraded).toBe(false);
  });

  it('answers degenerate input with a reason, never a degradation', () => {
    const ok = { n: 10, sum: 5, sum_squares: 5 };
    const decide = (baseline: GuardrailSample, treatment: GuardrailSample, confidence = 0.95) =>
      guardrailMsprt({ baseline, treatment, direction: 'lower_is_better', confidence });
    expect(decide({ n: 1, sum: 1, sum_squares: 1 }, ok)).toMatchObject({ degraded: false, reason: 'insufficient_data', always_valid_p: 1 });
    expect(decide({ n: 10, sum: 0, sum_squares: 0 }, { n: 10, sum: 0, sum_squares: 0 })).toMatchObject({ degraded: false, reason: 'zero_variance' });
    expect(decide({ n: 10, sum: 10, sum_squares: 1 }, ok)).toMatchObject({ degraded: false, reason: 'invalid_input' });
    expect(decide(ok, ok, 1)).toMatchObject({ reason: 'invalid_input' });
    expect(decide({ n: 2.5, sum: 1, sum_squares: 1 }, ok)).toMatchObject({ reason: 'invalid_input' });
  });
  it('reports no relative difference when the baseline mean is so small that the ratio overflows', () => {
    const out = guardrailMsprt({
      baseline: { n: 2, sum: 1e-323, sum_squares: 0 }, treatment: { n: 2, sum: 1, sum_squares: 1 },
      direction: 'lower_is_better', confidence: 0.95,
    });
    expect(out.relative_difference).toBeNull();
    expect(out.difference).toBe(0.5);
  });
});
