import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { applyFloor, mulberry32, sampleBeta, thompsonWeights } from './thompson.js';

const sum = (a: number[]): number => a.reduce((s, v) => s + v, 0);

describe('Thompson sampling', () => {
  it('is deterministic for a seed and changes with the seed', () => {
    const arms = [
      { successes: 10, trials: 100 },
      { successes: 12, trials: 100 },
      { successes: 9, trials: 100 },
    ];
    expect(thompsonWeights(arms, { seed: 42 })).toEqual(thompsonWeights(arms, { seed: 42 }));
    expect(thompsonWeights(arms, { seed: 42 })).not.toEqual(thompsonWeights(arms, { seed: 43 }));
  });

  it('matches the exact two-arm probability within Monte Carlo error', () => {
    // P(arm 2 best) = P(Beta(121, 881) > Beta(101, 901)) = 0.92318... (SciPy vector)
    const w = thompsonWeights(
      [
        { successes: 100, trials: 1000 },
        { successes: 120, trials: 1000 },
      ],
      { draws: 20000, seed: 7 },
    )!;
    expect(Math.abs(w[1] - 0.9231834389735596)).toBeLessThan(0.01);
  });

  it('sampler moments look right', () => {
    const rand = mulberry32(3);
    const xs = Array.from({ length: 20000 }, () => sampleBeta(2, 5, rand));
    const m = sum(xs) / xs.length;
    expect(Math.abs(m - 2 / 7)).toBeLessThan(0.005);
    const small = Array.from({ length: 20000 }, () => sampleBeta(0.5, 0.5, rand));
    expect(Math.abs(sum(small) / small.length - 0.5)).toBeLessThan(0.01);
  });

  it('edge cases', () => {
    expect(thompsonWeights([])).toEqual([]);
    expect(thompsonWeights([{ successes: 1, trials: 2 }])).toEqual([1]);
    expect(thompsonWeights([{ successes: 3, trials: 2 }])).toBeNull();
    expect(thompsonWeights([{ successes: 1, trials: 2 }], { draws: 0 })).toBeNull();
    expect(thompsonWeights([{ successes: 1, trials: 2 }], { floor: 2 })).toBeNull();
    expect(thompsonWeights([{ successes: NaN, trials: 2 }])).toBeNull();
    expect(thompsonWeights(Array.from({ length: 4 }, () => ({ successes: 0, trials: 0 })), { floor: 0.3 })).toEqual([
      0.25, 0.25, 0.25, 0.25,
    ]);
  });

  it('applyFloor water-fills', () => {
    const w = applyFloor([0.97, 0.02, 0.01], 0.05);
    expect(w[1]).toBe(0.05);
    expect(w[2]).toBe(0.05);
    expect(w[0]).toBeCloseTo(0.9, 15);
    const v = applyFloor([0.5, 0.45, 0.05, 0], 0.1);
    expect(v[2]).toBe(0.1);
    expect(v[3]).toBe(0.1);
    expect(v[0] / v[1]).toBeCloseTo(0.5 / 0.45, 12);
  });

  it('property: weights sum to 1 and respect the floor', () => {
    const arms = fc.array(
      fc.tuple(fc.integer({ min: 0, max: 100000 }), fc.integer({ min: 0, max: 100000 })).map(([a, b]) => ({
        successes: Math.min(a, b),
        trials: Math.max(a, b),
      })),
      { minLength: 1, maxLength: 6 },
    );
    fc.assert(
      fc.property(arms, fc.double({ min: 0, max: 0.3, noNaN: true }), fc.integer({ min: 0, max: 2 ** 31 }), (a, floor, seed) => {
        const w = thompsonWeights(a, { draws: 300, seed, floor })!;
        const effFloor = Math.min(floor, 1 / a.length);
        return (
          w.length === a.length &&
          Math.abs(sum(w) - 1) < 1e-12 &&
          w.every((x) => Number.isFinite(x) && x >= effFloor - 1e-12 && x <= 1 + 1e-12)
        );
      }),
      { numRuns: 100 },
    );
  });
});
