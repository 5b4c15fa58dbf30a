import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { srmChiSquare } from './srm.js';
import { sequentialSrm, srmLogBayesFactor } from './srm-sequential.js';
import { mulberry32 as prng } from './thompson.js';

/** Cumulative counts after each batch of `batch` assignments drawn with probabilities `p`. */
function looksOf(random: () => number, p: number[], batches: number, batch: number): number[][] {
  const counts = p.map(() => 0);
  const looks: number[][] = [];
  for (let b = 0; b < batches; b++) {
    for (let i = 0; i < batch; i++) {
      let u = random();
      let k = 0;
      while (k < p.length - 1 && u >= p[k]) u -= p[k++];
      counts[k]++;
    }
    looks.push([...counts]);
  }
  return looks;
}

const countVector = (k: number) => fc.array(fc.nat({ max: 100_000 }), { minLength: k, maxLength: k });
const allocation = (k: number) => fc.array(fc.integer({ min: 1, max: 100 }), { minLength: k, maxLength: k });

describe('sequential SRM test (Dirichlet-multinomial mixture)', () => {
  it('matches log Bayes factors computed with SciPy (gammaln)', () => {
    expect(srmLogBayesFactor([5000, 5000], [50, 50])).toBeCloseTo(-2.310035464273824, 9);
    expect(srmLogBayesFactor([5200, 4800], [50, 50])).toBeCloseTo(5.613613411776896, 9);
    expect(srmLogBayesFactor([340, 330, 330], [34, 33, 33])).toBeCloseTo(-2.4039570069987803, 9);
    expect(srmLogBayesFactor([120, 80, 60], [1, 1, 2])).toBeCloseTo(29.811560322538128, 9);
  });

  it('gives a p-value in [0, 1] that never rises as looks are added (always valid: the running minimum)', () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 5 }).chain((k) => fc.tuple(fc.array(countVector(k), { minLength: 1, maxLength: 8 }), allocation(k))), ([increments, w]) => {
      const looks: number[][] = [];
      let running = w.map(() => 0);
      for (const inc of increments) looks.push((running = running.map((x, i) => x + inc[i])));
      let previous = 1;
      for (let n = 1; n <= looks.length; n++) {
        const r = sequentialSrm(looks.slice(0, n), w);
        if (!r) continue;
        expect(r.p_value).toBeGreaterThanOrEqual(0);
        expect(r.p_value).toBeLessThanOrEqual(previous);
        expect(r.srm).toBe(r.p_value < r.threshold);
        previous = r.p_value;
      }
    }));
  });

  it('does not depend on the order of the variants nor on the scale of the allocation', () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 5 }).chain((k) => fc.tuple(countVector(k), allocation(k), fc.integer({ min: 1, max: 7 }))), ([x, w, scale]) => {
      const base = srmLogBayesFactor(x, w);
      const reversed = srmLogBayesFactor([...x].reverse(), [...w].reverse());
      const scaled = srmLogBayesFactor(x, w.map((v) => v * scale));
      if (base === null) return;
      expect(reversed).toBeCloseTo(base, 6);
      expect(scaled).toBeCloseTo(base, 6);
    }));
  });

  it('flags traffic in a 0% variant at once, and answers null when nothing can be tested', () => {
    expect(sequentialSrm([[10, 0, 1]], [50, 50, 0])).toMatchObject({ p_value: 0, srm: true, log_bayes_factor: null });
    expect(sequentialSrm([[0, 0]], [50, 50])).toBeNull();
    expect(sequentialSrm([[3, 0]], [100, 0])).toBeNull();
    expect(sequentialSrm([[3, 4]], [100, 0])).toMatchObject({ p_value: 0, srm: true });
    expect(sequentialSrm([[1, 2]], [50, 50, 0, 1])).toBeNull();
  });

  it('keeps false alarms under the level when read after every batch, where the chi-square read the same way does not', () => {
    const random = prng(19);
    const runs = 300;
    let sequentialAlarms = 0;
    let chiSquareAlarms = 0;
    for (let r = 0; r < runs; r++) {
      const looks = looksOf(random, [0.5, 0.5], 50, 40);
      if ((sequentialSrm(looks, [50, 50], { threshold: 0.05 })?.p_value ?? 1) < 0.05) sequentialAlarms++;
      if (looks.some((look) => (srmChiSquare(look, [50, 50])?.p_value ?? 1) < 0.05)) chiSquareAlarms++;
    }
    expect(sequentialAlarms / runs).toBeLessThanOrEqual(0.05);
    expect(chiSquareAlarms / runs).toBeGreaterThan(0.15);
  });

  it('detects a real mismatch (52/48 of 40,000) well below the alert threshold', () => {
    const looks = looksOf(prng(7), [0.52, 0.48], 40, 1000);
    const r = sequentialSrm(looks, [50, 50])!;
    expect(r.srm).toBe(true);
    expect(r.p_value).toBeLessThan(1e-6);
  });
});
