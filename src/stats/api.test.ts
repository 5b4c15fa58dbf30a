/**
 * Totality of the public API: for arbitrary numbers (including NaN, ±Infinity, negatives,
 * huge values) nothing throws and no NaN / Infinity appears anywhere in a result.
 * (The distribution primitives are excluded: they follow math-library conventions.)
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import * as stats from './index.js';

/** true when every number reachable in v is finite */
function allFinite(v: unknown): boolean {
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(allFinite);
  if (v !== null && typeof v === 'object') return Object.values(v).every(allFinite);
  return true;
}

const anyNumber = fc.oneof(
  fc.double(),
  fc.integer({ min: -5, max: 1_000_000 }),
  fc.constantFrom(0, 1, 2, 0.5, 1e-300, 1e300, Number.MAX_SAFE_INTEGER, -0),
);
const count = fc.oneof(fc.integer({ min: 0, max: 2_000_000 }), anyNumber);
const rate = fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), anyNumber);

const run = (name: string, arb: fc.Arbitrary<unknown[]>, f: (...args: never[]) => unknown, numRuns = 150): void => {
  it(name, () => {
    fc.assert(
      fc.property(arb, (args) => {
        const out = (f as (...a: unknown[]) => unknown)(...args);
        return allFinite(out);
      }),
      { numRuns },
    );
  });
};

describe('public API is total (no throw, no NaN/Infinity)', () => {
  it('the checker catches NaN hidden in objects', () => {
    expect(allFinite({ a: [1, { b: NaN }] })).toBe(false);
    expect(allFinite({ a: [1, { b: null }], c: 'x' })).toBe(true);
  });

  run('fisherExactTwoSided', fc.tuple(count, count, count, count), stats.fisherExactTwoSided, 100);
  run(
    'welchTTest',
    fc.tuple(
      fc.record({ n: count, mean: anyNumber, variance: anyNumber }),
      fc.record({ n: count, mean: anyNumber, variance: anyNumber }),
      rate,
    ),
    stats.welchTTest,
  );
  run('summaryFromSums -> welch', fc.tuple(count, anyNumber, anyNumber), (n: number, s: number, ss: number) =>
    stats.welchTTest(stats.summaryFromSums(n, s, ss), { n: 10, mean: 1, variance: 1 }),
  );
  run(
    'adjust',
    fc.tuple(fc.array(anyNumber, { maxLength: 12 }), fc.constantFrom(...stats.CORRECTION_METHODS)),
    stats.adjust,
  );
  run('srmChiSquare', fc.tuple(fc.array(count, { maxLength: 5 }), fc.array(anyNumber, { maxLength: 5 })), stats.srmChiSquare);
  run('sampleSizeTwoProportions', fc.tuple(rate, rate, rate, rate), stats.sampleSizeTwoProportions);
  run('sampleSizeForEffect', fc.tuple(rate, anyNumber, fc.constantFrom('absolute', 'relative'), rate, rate), stats.sampleSizeForEffect);
  run('achievedPower', fc.tuple(rate, rate, anyNumber, rate), stats.achievedPower);
  run('minimumDetectableEffect', fc.tuple(rate, anyNumber, rate, rate, fc.constantFrom('increase', 'decrease')), stats.minimumDetectableEffect, 80);
  run(
    'runtimeDays',
    fc.tuple(
      fc.record({
        nPerVariant: anyNumber,
        dailyTraffic: anyNumber,
        variantCount: fc.option(anyNumber, { nil: undefined }),
        allocationPercent: fc.option(fc.array(anyNumber, { maxLength: 4 }), { nil: undefined }),
        trafficShare: fc.option(anyNumber, { nil: undefined }),
      }),
    ),
    stats.runtimeDays,
  );
  const msprtInput = fc.record({
    controlRate: rate,
    controlN: count,
    treatmentRate: rate,
    treatmentN: count,
    tauSquared: anyNumber,
  });
  run('msprtTwoProportions', fc.tuple(msprtInput), stats.msprtTwoProportions);
  run('msprtFromCounts', fc.tuple(count, count, count, count, anyNumber), stats.msprtFromCounts);
  run('confidenceSequenceTwoProportions', fc.tuple(msprtInput, rate), stats.confidenceSequenceTwoProportions);
  run('runningMinimum', fc.tuple(fc.array(anyNumber, { maxLength: 10 })), stats.runningMinimum);
  const guardrailSample = fc.record({ n: count, sum: anyNumber, sum_squares: anyNumber });
  run(
    'guardrailMsprt',
    fc.tuple(fc.record({
      baseline: guardrailSample, treatment: guardrailSample, direction: fc.constantFrom('lower_is_better', 'higher_is_better') as fc.Arbitrary<stats.GuardrailDirection>,
      confidence: rate, mixingScale: fc.option(anyNumber, { nil: undefined }),
    })),
    stats.guardrailMsprt,
  );
  const arm = fc.record({ conversions: count, n: count });
  run(
    'betaBinomialAnalysis',
    fc.tuple(
      arm,
      arm,
      fc.record({
        prior: fc.option(fc.tuple(anyNumber, anyNumber), { nil: undefined }),
        credibleLevel: fc.option(rate, { nil: undefined }),
        rope: fc.option(anyNumber, { nil: undefined }),
      }),
    ),
    stats.betaBinomialAnalysis,
    40,
  );
  run(
    'bayesianDecision',
    fc.tuple(
      fc.record({
        probabilityToBeat: anyNumber,
        expectedLoss: anyNumber,
        ropeProbability: fc.option(anyNumber, { nil: null }),
        lossThreshold: anyNumber,
        credibleLevel: anyNumber,
      }),
    ),
    stats.bayesianDecision,
  );
  const cupedStats = fc.record({ n: count, sumY: anyNumber, sumY2: anyNumber, sumX: anyNumber, sumX2: anyNumber, sumXY: anyNumber });
  run('cupedCompare', fc.tuple(cupedStats, cupedStats, rate), stats.cupedCompare);
  run(
    'thompsonWeights',
    fc.tuple(
      fc.array(fc.record({ successes: count, trials: count }), { maxLength: 4 }),
      fc.record({ draws: fc.constantFrom(1, 50, 0, -1, 1.5), seed: anyNumber, floor: rate }),
    ),
    stats.thompsonWeights,
    80,
  );
  run('compareProportions', fc.tuple(count, count, count, count, rate), stats.compareProportions);
  const ratioStats = fc.record({ n: count, sum_x: anyNumber, sum_y: anyNumber, sum_x2: anyNumber, sum_y2: anyNumber, sum_xy: anyNumber });
  run('compareRatios', fc.tuple(ratioStats, ratioStats, rate), stats.compareRatios);
  const capping = fc.oneof(
    fc.constant({ type: 'none' as const }),
    fc.record({ type: fc.constant('absolute' as const), value: anyNumber }),
    fc.record({ type: fc.constant('percentile' as const), p: rate }),
  );
  run('capGroups', fc.tuple(fc.array(fc.array(anyNumber, { maxLength: 8 }), { maxLength: 3 }), capping), stats.capGroups);
  run('quantileRanks', fc.tuple(count, rate, rate), stats.quantileRanks);
  run('quantileSummary', fc.tuple(fc.array(anyNumber, { maxLength: 30 }), rate, rate), stats.quantileSummary);
  const quantileSummary = fc.record({
    n: count,
    quantile: anyNumber,
    lower: fc.option(anyNumber, { nil: null }),
    upper: fc.option(anyNumber, { nil: null }),
  });
  run('compareQuantiles', fc.tuple(quantileSummary, quantileSummary, rate, rate), stats.compareQuantiles);
});
