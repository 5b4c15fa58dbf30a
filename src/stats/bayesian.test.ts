import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  bayesianDecision,
  betaBinomialAnalysis,
  credibleInterval,
  expectedLoss,
  posterior,
  probabilityGreater,
  probabilityGreaterByQuadrature,
  probabilityTreatmentBeatsControl,
  ropeProbability,
} from './bayesian.js';

// Independent references: SciPy adaptive quad on betainc (1e-13 requested), except where noted.
const references = [
  { c: [10.5, 90.5], t: [15.5, 85.5], prob: 0.8575240122091228, lossT: 0.0034271513081747373, lossC: 0.05293210180322427, rope: 0.09739866477965235 },
  { c: [0.5, 1000.5], t: [3.5, 997.5], prob: 0.9669499807345961, lossT: 2.7732572134549902e-5, lossC: 0.00302473556913757, rope: 0.995957541399735 },
  { c: [1000.3, 9000.7], t: [1100.2, 8900.1], prob: 0.9894610665747554, lossT: 1.557342546758447e-5, lossC: 0.010012274924282647, rope: 0.5003730685202074 },
  { c: [2.5, 2.5], t: [2.7, 1.9], prob: 0.6178918295218276, lossT: 0.08016132281094249, lossC: 0.167117844550073, rope: 0.024863915671597715 },
  { c: [3, 5], t: [2, 9], prob: 0.16176470588235295, lossT: 0.2095588235294118, lossC: 0.016377005347593586, rope: 0.025959437703861016 },
  { c: [30000.5, 970000.5], t: [30500.5, 969500.5], prob: 0.9805034328626087, lossT: 1.7283971627969923e-6, lossC: 0.000501727897163297, rope: 1 },
];

const beta = (p: number[]) => ({ alpha: p[0], beta: p[1] });

describe('Beta-Binomial', () => {
  it('matches independent numerical references (closed form and quadrature paths)', () => {
    for (const r of references) {
      const c = beta(r.c);
      const t = beta(r.t);
      expect(Math.abs(probabilityGreater(c, t)! - r.prob)).toBeLessThan(1e-9);
      expect(Math.abs(expectedLoss(t, c)! - r.lossT)).toBeLessThan(1e-10);
      expect(Math.abs(expectedLoss(c, t)! - r.lossC)).toBeLessThan(1e-10);
      expect(Math.abs(ropeProbability(c, t, 0.01)! - r.rope)).toBeLessThan(1e-9);
    }
  });

  it('closed form: exact rational value for small integer parameters', () => {
    // P(Beta(2,9) > Beta(3,5)) = 11/68
    expect(probabilityGreater({ alpha: 3, beta: 5 }, { alpha: 2, beta: 9 })).toBeCloseTo(11 / 68, 14);
    // identical posteriors: 1/2
    expect(probabilityGreater({ alpha: 7, beta: 3 }, { alpha: 7, beta: 3 })).toBeCloseTo(0.5, 14);
  });

  it('large counts stay accurate (quadrature beyond the closed-form term limit)', () => {
    // references: SciPy adaptive quad on betainc
    const p = probabilityTreatmentBeatsControl({ conversions: 900_000, n: 9_000_000 }, { conversions: 901_000, n: 9_000_000 })!;
    const p2 = probabilityTreatmentBeatsControl({ conversions: 3_000_000, n: 9_000_000 }, { conversions: 3_003_000, n: 9_000_000 })!;
    const p3 = probabilityTreatmentBeatsControl({ conversions: 4, n: 1e9 }, { conversions: 8, n: 1e9 }, [1, 1])!;
    expect(Math.abs(p - 0.7839139283034277)).toBeLessThan(1e-8);
    expect(Math.abs(p2 - 0.9331685156587133)).toBeLessThan(1e-8);
    // mpmath (40 digits) closed form
    expect(Math.abs(p3 - 0.8665771492230225)).toBeLessThan(1e-10);
    // non-integer prior forces quadrature with extreme parameters
    const q = probabilityGreater({ alpha: 9001.5, beta: 1e9 + 0.5 }, { alpha: 9101.5, beta: 1e9 + 0.5 })!;
    const exact = probabilityGreater({ alpha: 9001, beta: 1e9 }, { alpha: 9101, beta: 1e9 })!;
    expect(Math.abs(exact - 0.7713404969378632)).toBeLessThan(1e-10);
    expect(Math.abs(q - exact)).toBeLessThan(0.01);
  });

  it('property: closed form and quadrature agree; loss identity holds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 0, max: 5000 }),
        (nc, cc0, nt, tc0) => {
          const cc = Math.min(cc0, nc);
          const tc = Math.min(tc0, nt);
          const c = posterior({ conversions: cc, n: nc })!;
          const t = posterior({ conversions: tc, n: nt })!;
          const exact = probabilityGreater(c, t)!;
          const quad = probabilityGreaterByQuadrature(c, t)!;
          const lossT = expectedLoss(t, c)!;
          const lossC = expectedLoss(c, t)!;
          const meanDiff = t.alpha / (t.alpha + t.beta) - c.alpha / (c.alpha + c.beta);
          return (
            exact >= 0 &&
            exact <= 1 &&
            Math.abs(exact - quad) < 1e-8 &&
            lossT >= 0 &&
            lossC >= 0 &&
            Math.abs(lossC - lossT - meanDiff) < 1e-9
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  it('ROPE probability grows with the ROPE width and is a probability', () => {
    const c = { alpha: 101, beta: 901 };
    const t = { alpha: 121, beta: 881 };
    let prev = 0;
    for (const r of [0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 1]) {
      const v = ropeProbability(c, t, r)!;
      expect(v).toBeGreaterThanOrEqual(prev - 1e-12);
      expect(v).toBeLessThanOrEqual(1);
      prev = v;
    }
    expect(prev).toBe(1);
    expect(ropeProbability(c, t, -1)).toBeNull();
  });

  it('credible intervals', () => {
    const ci = credibleInterval({ alpha: 1, beta: 1 }, 0.9)!;
    expect(ci[0]).toBeCloseTo(0.05, 12);
    expect(ci[1]).toBeCloseTo(0.95, 12);
    expect(credibleInterval({ alpha: 1, beta: 1 }, 1)).toBeNull();
  });

  it('invalid input gives null', () => {
    expect(posterior({ conversions: 11, n: 10 })).toBeNull();
    expect(posterior({ conversions: -1, n: 10 })).toBeNull();
    expect(posterior({ conversions: 1, n: 10 }, [0, 1])).toBeNull();
    expect(probabilityGreater({ alpha: NaN, beta: 1 }, { alpha: 1, beta: 1 })).toBeNull();
    expect(betaBinomialAnalysis({ conversions: 1, n: NaN }, { conversions: 1, n: 10 })).toBeNull();
  });

  it('betaBinomialAnalysis bundles everything, with no NaN', () => {
    const r = betaBinomialAnalysis({ conversions: 100, n: 1000 }, { conversions: 120, n: 1000 }, { rope: 0.005 })!;
    expect(r.prob_treatment_beats_control).toBeCloseTo(0.9231834389735596, 9);
    expect(r.rope_probability).not.toBeNull();
    expect(r.control.credible_interval[0]).toBeLessThan(r.control.mean);
    const empty = betaBinomialAnalysis({ conversions: 0, n: 0 }, { conversions: 0, n: 0 })!;
    expect(empty.prob_treatment_beats_control).toBeCloseTo(0.5, 12);
    expect(empty.rope_probability).toBeNull();
    const json = JSON.stringify(r) + JSON.stringify(empty);
    expect(json).not.toMatch(/NaN|Infinity/);
  });

  it('decision rule', () => {
    const base = { probabilityToBeat: 0.5, expectedLoss: 0.01, ropeProbability: 0.1, lossThreshold: 0.001, credibleLevel: 0.95 };
    expect(bayesianDecision(base)).toBe('CONTINUE');
    expect(bayesianDecision({ ...base, probabilityToBeat: 0.97, expectedLoss: 0.0005 })).toBe('STOP_WINNER');
    expect(bayesianDecision({ ...base, probabilityToBeat: 0.97, expectedLoss: 0.002 })).toBe('CONTINUE');
    expect(bayesianDecision({ ...base, ropeProbability: 0.96 })).toBe('STOP_EQUIVALENT');
    expect(bayesianDecision({ ...base, probabilityToBeat: 0.97, expectedLoss: 0.0001, ropeProbability: 0.99 })).toBe('STOP_WINNER');
    expect(bayesianDecision({ ...base, probabilityToBeat: 0.03 })).toBe('STOP_FUTILE');
    expect(bayesianDecision({ ...base, probabilityToBeat: 0.03, ropeProbability: 0.99 })).toBe('STOP_EQUIVALENT');
    expect(bayesianDecision({ ...base, ropeProbability: null })).toBe('CONTINUE');
    expect(bayesianDecision({ ...base, probabilityToBeat: NaN })).toBe('CONTINUE');
    expect(bayesianDecision({ ...base, credibleLevel: 1.5, probabilityToBeat: 0.99, expectedLoss: 0 })).toBe('CONTINUE');
  });
});
