import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { cupedCompare, cupedTheta, type CupedStats } from './cuped.js';
import { mulberry32 } from './thompson.js';

function sums(xs: number[], ys: number[]): CupedStats {
  let sumX = 0, sumX2 = 0, sumY = 0, sumY2 = 0, sumXY = 0;
  xs.forEach((x, i) => {
    const y = ys[i];
    sumX += x;
    sumX2 += x * x;
    sumY += y;
    sumY2 += y * y;
    sumXY += x * y;
  });
  return { n: xs.length, sumX, sumX2, sumY, sumY2, sumXY };
}

function gaussian(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(rand())) * Math.cos(2 * Math.PI * rand());
}

function arm(n: number, effect: number, seed: number): { x: number[]; y: number[] } {
  const rand = mulberry32(seed);
  const x: number[] = [];
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const xi = 10 + 3 * gaussian(rand);
    x.push(xi);
    y.push(2 + 0.8 * xi + effect + gaussian(rand));
  }
  return { x, y };
}

const mean = (a: number[]): number => a.reduce((s, v) => s + v, 0) / a.length;
const sampleVar = (a: number[]): number => {
  const m = mean(a);
  return a.reduce((s, v) => s + (v - m) ** 2, 0) / (a.length - 1);
};

describe('CUPED', () => {
  const c = arm(4000, 0, 11);
  const t = arm(4000, 0.05, 12);
  const sc = sums(c.x, c.y);
  const st = sums(t.x, t.y);

  it('theta is the pooled within-arm OLS slope; adjusted stats match a two-pass computation', () => {
    const cx = mean(c.x), cy = mean(c.y), tx = mean(t.x), ty = mean(t.y);
    let sxy = 0, sxx = 0;
    c.x.forEach((x, i) => { sxy += (x - cx) * (c.y[i] - cy); sxx += (x - cx) ** 2; });
    t.x.forEach((x, i) => { sxy += (x - tx) * (t.y[i] - ty); sxx += (x - tx) ** 2; });
    const theta = sxy / sxx;
    expect(cupedTheta([sc, st])!).toBeCloseTo(theta, 9);
    const r = cupedCompare(sc, st)!;
    expect(r.theta).toBeCloseTo(0.8, 1);
    const grand = (cx * 4000 + tx * 4000) / 8000;
    expect(r.control.adjusted_mean).toBeCloseTo(cy - theta * (cx - grand), 9);
    expect(r.treatment.adjusted_mean).toBeCloseTo(ty - theta * (tx - grand), 9);
    expect(r.control.adjusted_variance).toBeCloseTo(sampleVar(c.y.map((y, i) => y - theta * c.x[i])), 8);
    expect(r.test.difference!).toBeCloseTo(ty - cy - theta * (tx - cx), 9);
    // var(y) = 0.64*9 + 1 = 6.76, residual 1: reduction ~ 1 - 1/6.76
    expect(r.variance_reduction!).toBeGreaterThan(0.8);
    expect(r.test.std_error!).toBeLessThan(r.unadjusted_test.std_error!);
    expect(r.reason).toBeNull();
  });

  it('constant covariate: no adjustment, same as the unadjusted test', () => {
    const cc = sums(c.x.map(() => 5), c.y);
    const tt = sums(t.x.map(() => 5), t.y);
    const r = cupedCompare(cc, tt)!;
    expect(r.theta).toBe(0);
    expect(r.reason).toBe('no_covariate_variance');
    expect(r.variance_reduction!).toBeCloseTo(0, 12);
    expect(r.test.p_value).toBeCloseTo(r.unadjusted_test.p_value, 12);
  });

  it('degenerate and invalid input', () => {
    const empty = { n: 0, sumX: 0, sumX2: 0, sumY: 0, sumY2: 0, sumXY: 0 };
    const r = cupedCompare(empty, empty)!;
    expect(r.theta).toBe(0);
    expect(r.test.reason).toBe('insufficient_data');
    expect(r.variance_reduction).toBeNull();
    expect(cupedCompare({ ...empty, sumY: NaN }, empty)).toBeNull();
    expect(cupedTheta([{ ...empty, n: -1 }])).toBeNull();
  });

  it('property: no NaN/Infinity in results for arbitrary consistent data', () => {
    const data = fc.array(fc.tuple(fc.double({ min: -1e3, max: 1e3, noNaN: true }), fc.double({ min: -1e3, max: 1e3, noNaN: true })), {
      maxLength: 30,
    });
    fc.assert(
      fc.property(data, data, (a, b) => {
        const r = cupedCompare(
          sums(a.map((p) => p[0]), a.map((p) => p[1])),
          sums(b.map((p) => p[0]), b.map((p) => p[1])),
        );
        return r !== null && !/NaN|Infinity/.test(JSON.stringify(r)) && r.test.p_value >= 0 && r.test.p_value <= 1;
      }),
      { numRuns: 200 },
    );
  });
});
