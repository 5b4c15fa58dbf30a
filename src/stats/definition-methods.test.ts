/**
 * The methods added for metric library definitions beside the results (docs/statistics.md, "Definitions in the other
 * analyses"): the normal mSPRT, the normal-model Bayesian comparison, two-means power and the delta-method CUPED of
 * ratios. Their numbers are checked against numpy/SciPy through the API (test/results/definitions-reference.test.ts);
 * these are the properties and degenerate cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalBayes, normalInterval } from './bayesian-normal.js';
import { cupedCompare } from './cuped.js';
import { cupedCompareRatios, type RatioCupedStats } from './cuped-ratio.js';
import { achievedPowerTwoMeans, sampleSizeTwoMeans } from './power-means.js';
import { confidenceSequenceNormal, confidenceSequenceTwoProportions, msprtNormal, msprtTwoProportions } from './sequential.js';

const value = fc.double({ min: -50, max: 50, noNaN: true });
const positive = fc.double({ min: 0.01, max: 50, noNaN: true });

describe('normal mSPRT', () => {
  it('is the two-proportion mSPRT when given the proportions difference and variance', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 500 }), fc.integer({ min: 1, max: 500 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 1e-6, max: 1, noNaN: true }),
      (nc, nt, pc, pt, tau2) => {
        const input = { controlRate: pc, controlN: nc, treatmentRate: pt, treatmentN: nt, tauSquared: tau2 };
        const normal = { difference: pt - pc, variance: (pc * (1 - pc)) / nc + (pt * (1 - pt)) / nt, tauSquared: tau2 };
        expect(msprtNormal(normal)).toEqual(msprtTwoProportions(input));
        expect(confidenceSequenceNormal(normal, 0.05)).toEqual(confidenceSequenceTwoProportions(input, 0.05));
      }));
  });

  it('excludes 0 from the sequence exactly when p <= alpha', () => {
    fc.assert(fc.property(value, positive, positive, (d, v, tau2) => {
      const p = msprtNormal({ difference: d, variance: v, tauSquared: tau2 }).always_valid_p;
      const cs = confidenceSequenceNormal({ difference: d, variance: v, tauSquared: tau2 }, 0.05);
      if (Math.abs(p - 0.05) > 1e-9) expect(cs.lower! > 0 || cs.upper! < 0).toBe(p <= 0.05);
    }));
  });

  it('answers degenerate input without NaN', () => {
    expect(msprtNormal({ difference: 1, variance: 0, tauSquared: 1 })).toMatchObject({ always_valid_p: 1, reason: 'zero_variance' });
    expect(msprtNormal({ difference: 1, variance: -1, tauSquared: 1 })).toMatchObject({ always_valid_p: 1, reason: 'invalid_input' });
    expect(msprtNormal({ difference: 1, variance: 1, tauSquared: 0 })).toMatchObject({ always_valid_p: 1, reason: 'invalid_input' });
    expect(confidenceSequenceNormal({ difference: NaN, variance: 1, tauSquared: 1 })).toMatchObject({ lower: null, reason: 'invalid_input' });
  });
});

describe('normal-model Bayesian comparison', () => {
  it('gives 1/2 to beat, a positive loss and a ROPE probability in [0, 1] for equal arms', () => {
    fc.assert(fc.property(positive, positive, positive, (m, v, rope) => {
      const r = normalBayes({ mean: m, variance: v }, { mean: m, variance: v }, { credibleLevel: 0.95, rope });
      expect(r.prob_treatment_beats_control).toBeCloseTo(0.5, 12);
      expect(r.rope_probability!).toBeGreaterThanOrEqual(0);
      expect(r.rope_probability!).toBeLessThanOrEqual(1);
      expect(r.expected_loss_treatment!).toBeGreaterThan(0);
    }));
  });

  it('names why it cannot compare', () => {
    const options = { credibleLevel: 0.95, rope: 0.01 };
    expect(normalBayes({ mean: 0, variance: 1 }, { mean: 1, variance: 1 }, options).reason).toBe('non_positive_control');
    expect(normalBayes({ mean: 1, variance: 0 }, { mean: 1, variance: 0 }, options).reason).toBe('zero_variance');
    expect(normalBayes({ mean: 1, variance: -1 }, { mean: 1, variance: 1 }, options)).toMatchObject({ reason: 'invalid_input', prob_treatment_beats_control: null });
    expect(normalInterval({ mean: 1, variance: 1 }, 1.5)).toBeNull();
  });
});

describe('two-means power', () => {
  it('achievedPower at the unrounded sample size is the power asked for', () => {
    fc.assert(fc.property(positive, positive, fc.double({ min: 0.5, max: 0.99, noNaN: true }), (sigma2, effect, power) => {
      const n = sampleSizeTwoMeans(sigma2, effect, 0.05, power);
      expect(n.reason).toBeNull();
      expect(achievedPowerTwoMeans(sigma2, effect, n.value!.n_per_variant_unrounded, 0.05).value!).toBeCloseTo(power, 9);
    }));
  });

  it('refuses what it cannot plan', () => {
    expect(sampleSizeTwoMeans(0, 1).reason).toBe('invalid_input');
    expect(sampleSizeTwoMeans(1, 0).reason).toBe('zero_effect');
    expect(sampleSizeTwoMeans(1, 1, 1.5).reason).toBe('invalid_alpha');
    expect(sampleSizeTwoMeans(1, 1, 0.05, 0.01).reason).toBe('invalid_power');
  });
});

describe('delta-method CUPED of ratios', () => {
  const arm = fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 9 })), { minLength: 3, maxLength: 40 });
  const ratioStats = (rows: Array<[number, number, number]>): RatioCupedStats => {
    const s = (f: (r: [number, number, number]) => number) => rows.reduce((a, r) => a + f(r), 0);
    return {
      n: rows.length, sum_x: s((r) => r[0]), sum_y: s((r) => r[1]), sum_c: s((r) => r[2]), sum_x2: s((r) => r[0] ** 2), sum_y2: s((r) => r[1] ** 2),
      sum_c2: s((r) => r[2] ** 2), sum_xy: s((r) => r[0] * r[1]), sum_xc: s((r) => r[0] * r[2]), sum_yc: s((r) => r[1] * r[2]),
    };
  };

  it('with denominator 1 for every user is CUPED of the means', () => {
    fc.assert(fc.property(arm, arm, (a, b) => {
      const rows = (xs: Array<[number, number]>) => xs.map(([x, c]): [number, number, number] => [x, 1, c]);
      const r = cupedCompareRatios(ratioStats(rows(a)), ratioStats(rows(b)))!;
      const meanStats = (xs: Array<[number, number]>) => ({
        n: xs.length, sumY: xs.reduce((s, [x]) => s + x, 0), sumY2: xs.reduce((s, [x]) => s + x * x, 0),
        sumX: xs.reduce((s, [, c]) => s + c, 0), sumX2: xs.reduce((s, [, c]) => s + c * c, 0), sumXY: xs.reduce((s, [x, c]) => s + x * c, 0),
      });
      const m = cupedCompare(meanStats(a), meanStats(b))!;
      if (m.test.reason !== null || r.p_value === null) return;
      expect(r.theta).toBeCloseTo(m.theta, 8);
      expect(r.adjusted_difference!).toBeCloseTo(m.test.difference!, 8);
      expect(r.p_value).toBeCloseTo(m.test.p_value, 8);
    }));
  });

  it('says why it cannot adjust', () => {
    const one: RatioCupedStats = { n: 1, sum_x: 1, sum_y: 1, sum_c: 1, sum_x2: 1, sum_y2: 1, sum_c2: 1, sum_xy: 1, sum_xc: 1, sum_yc: 1 };
    expect(cupedCompareRatios(one, one)!.reason).toBe('insufficient_data');
    expect(cupedCompareRatios({ ...one, n: -1 }, one)).toBeNull();
    const flat = (x: number): RatioCupedStats => ({ n: 2, sum_x: x, sum_y: 2, sum_c: 2, sum_x2: x * x - 2 * x + 2, sum_y2: 2, sum_c2: 2, sum_xy: x, sum_xc: x, sum_yc: 2 });
    expect(cupedCompareRatios(flat(3), flat(5))!.reason).toBe('no_covariate_variance');
  });
});
