import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareRatios, guardrailMsprt } from '../stats/index.js';
import { definitionGuardrail } from './definition-guardrails.js';
import { ratioStatsOf, sampleOf } from './definitions.js';
import type { DefinitionSettings, VariantUserValues } from './types.js';

const mean = (capping: DefinitionSettings['capping'] = { type: 'none' }): DefinitionSettings => ({
  id: 'm', version: 1, kind: 'mean', value: { event_name: 'latency', aggregate: 'sum' }, numerator: null, denominator: null, quantile: null, capping,
});
const ratio = (capping: DefinitionSettings['capping'] = { type: 'none' }): DefinitionSettings => ({
  ...mean(capping), id: 'r', kind: 'ratio', value: null,
  numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'visit', aggregate: 'count' },
});
/** A group of `extra` users without events beside the rows. */
const group = (variantId: string, rows: number[][], extra = 0): VariantUserValues => ({ variantId, users: rows.length + extra, rows });

const values = fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 0, maxLength: 40 });
const pairs = fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 1, max: 5 })), { minLength: 2, maxLength: 40 });
const direction = fc.constantFrom('lower_is_better' as const, 'higher_is_better' as const);
const decisionOf = (r: { degraded: boolean; z: number | null; log_likelihood_ratio: number | null; reason: string | null }) =>
  ({ degraded: r.degraded, z: r.z, llr: r.log_likelihood_ratio, reason: r.reason });

describe('guardrails on metric definitions (pure)', () => {
  it('mean: the guardrail mSPRT of per-user values, users without events counting 0', () => {
    fc.assert(fc.property(values, values, fc.nat(5), direction, (b, t, extra, dir) => {
      const r = definitionGuardrail(mean(), { baseline: group('b', b.map((v) => [v]), extra), exposed: group('e', t.map((v) => [v])) }, dir, 0.95)!;
      const expected = guardrailMsprt({ baseline: sampleOf([...b, ...Array(extra).fill(0)]), treatment: sampleOf(t), direction: dir, confidence: 0.95 });
      expect(decisionOf(r)).toEqual(decisionOf(expected));
      expect(r.users_capped).toBe(0);
    }));
  });

  it('ratio: with every denominator 1 it is the mean test, and its variance is the delta method of results (compareRatios)', () => {
    fc.assert(fc.property(pairs, pairs, direction, (b, t, dir) => {
      const ones = definitionGuardrail(ratio(), { baseline: group('b', b.map(([x]) => [x, 1])), exposed: group('e', t.map(([x]) => [x, 1])) }, dir, 0.9)!;
      const asMean = guardrailMsprt({ baseline: sampleOf(b.map(([x]) => x)), treatment: sampleOf(t.map(([x]) => x)), direction: dir, confidence: 0.9 });
      expect(ones.reason).toBe(asMean.reason);
      expect(ones.degraded).toBe(asMean.degraded);
      if (asMean.z !== null) expect(ones.z).toBeCloseTo(asMean.z, 6);
      if (asMean.log_likelihood_ratio !== null) expect(ones.log_likelihood_ratio).toBeCloseTo(asMean.log_likelihood_ratio, 6);

      const r = definitionGuardrail(ratio(), { baseline: group('b', b), exposed: group('e', t) }, dir, 0.9)!;
      const delta = compareRatios(ratioStatsOf(b.map(([x]) => x), b.map(([, y]) => y)), ratioStatsOf(t.map(([x]) => x), t.map(([, y]) => y)));
      expect(r.difference).toBeCloseTo(delta.difference!, 9);
      if (r.z !== null && delta.std_error !== null) expect(r.z).toBeCloseTo(delta.difference! / delta.std_error, 6);
    }));
  });

  it('a cap above every value changes nothing (mean and ratio numerator)', () => {
    fc.assert(fc.property(pairs, pairs, direction, (b, t, dir) => {
      const groups = { baseline: group('b', b), exposed: group('e', t) };
      const above = { type: 'absolute' as const, value: 51 };
      const plainMean = definitionGuardrail(mean(), groups, dir, 0.95)!;
      const cappedMean = definitionGuardrail(mean(above), groups, dir, 0.95)!;
      expect({ ...cappedMean, cap: null }).toEqual(plainMean);
      expect(cappedMean).toMatchObject({ cap: 51, users_capped: 0 });
      const plainRatio = definitionGuardrail(ratio(), groups, dir, 0.95)!;
      expect({ ...definitionGuardrail(ratio(above), groups, dir, 0.95)!, cap: null }).toEqual(plainRatio);
    }));
  });

  it('caps per-user values at the pooled percentile of both windows before testing, counting the users touched', () => {
    const baseline = group('b', [[1], [2], [3], [1000]]);
    const exposed = group('e', [[2], [3], [4], [5]]);
    const r = definitionGuardrail(mean({ type: 'percentile', p: 0.75 }), { baseline, exposed }, 'lower_is_better', 0.95)!;
    // Pooled sorted: 1 2 2 3 3 4 5 1000; h = 7 * 0.75 = 5.25: 4 + 0.25 * (5 - 4) = 4.25.
    expect(r.cap).toBe(4.25);
    expect(r.users_capped).toBe(2);
    expect(r.baseline_mean).toBeCloseTo((1 + 2 + 3 + 4.25) / 4, 12);
    expect(r.treatment_mean).toBeCloseTo((2 + 3 + 4 + 4.25) / 4, 12);
  });

  it('takes no proportion or quantile definition, and answers for an arm without a denominator', () => {
    const groups = { baseline: group('b', [[1, 1]]), exposed: group('e', [[1, 1]]) };
    expect(definitionGuardrail({ ...mean(), kind: 'quantile', quantile: 0.9 }, groups, 'lower_is_better', 0.95)).toBeNull();
    expect(definitionGuardrail({ ...mean(), kind: 'proportion' }, groups, 'lower_is_better', 0.95)).toBeNull();
    const none = definitionGuardrail(ratio(), { baseline: group('b', [[1, 0], [2, 0]]), exposed: group('e', [[1, 1], [2, 1]]) }, 'lower_is_better', 0.95)!;
    expect(none).toMatchObject({ degraded: false, reason: 'insufficient_data', baseline_mean: null, treatment_mean: 1.5 });
  });
});
