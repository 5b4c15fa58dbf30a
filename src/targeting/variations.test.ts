import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileFlag, compileFlags } from './compile-flag.js';
import { arbContext, arbEnv, arbFlag, arbTypedFlag, arbUserId } from './compile.arbitraries.js';
import { evaluateFlag, type FlagDefinition } from './flag.js';
import { bucketFor } from './hash.js';
import { pickSplit, splitBucket, validateTypedFields, VARIATION_MESSAGES, type TypedFields } from './variations.js';

const withoutRule = <T extends { rule?: string }>({ rule: _rule, ...rest }: T) => rest;

describe('typed flags compiled answer as evaluateFlag', () => {
  it('explain and evaluate, alone and compiled together', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(arbTypedFlag, arbFlag), { minLength: 1, maxLength: 5 }), fc.array(fc.tuple(arbUserId, arbContext), { minLength: 1, maxLength: 3 }), arbEnv, (flags, requests, env) => {
        const set = compileFlags(flags);
        for (const [userId, ctx] of requests) {
          const all = set.evaluateAll(userId, ctx, env);
          flags.forEach((flag, i) => {
            const reference = evaluateFlag(flag, userId, ctx, env);
            expect(compileFlag(flag).explain(userId, ctx, env)).toEqual(reference);
            expect(set.flags[i].evaluate(userId, ctx, env)).toEqual(withoutRule(reference));
            expect(all[i]).toEqual(withoutRule(reference));
            expect(set.enabledAll(userId, ctx, env)[i]).toBe(reference.enabled);
            // serve (the SDK's getValue): the variation the reference serves, found with the rollout decided first.
            const served = set.flags[i].serve?.(userId, ctx, env);
            if (set.flags[i].serve) expect(served && { variation: served.key, value: served.value }).toEqual(reference.variation === undefined ? undefined : { variation: reference.variation, value: reference.value });
          });
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('a typed flag is on or off exactly as the same flag without variations', () => {
    fc.assert(
      fc.property(arbTypedFlag, arbUserId, arbContext, arbEnv, (flag, userId, ctx, env) => {
        const plain: FlagDefinition = { key: flag.key, is_active: flag.is_active, status: flag.status, rollout_percentage: flag.rollout_percentage, targeting_rules: flag.targeting_rules };
        const typed = compileFlag(flag).explain(userId, ctx, env);
        expect({ enabled: typed.enabled, reason: typed.reason, rule: typed.rule }).toEqual({ rule: undefined, ...evaluateFlag(plain, userId, ctx, env) });
      }),
      { numRuns: 1000 },
    );
  });

  it('a boolean flag with value_type boolean answers as before, with no variation', () => {
    fc.assert(
      fc.property(arbFlag, arbUserId, arbContext, arbEnv, (flag, userId, ctx, env) => {
        const tagged = { ...flag, value_type: 'boolean' as const, variations: [{ key: 'a', value: 'x' }, { key: 'b', value: 'y' }], default_variation: 'a' };
        expect(compileFlag(tagged).explain(userId, ctx, env)).toEqual(evaluateFlag(flag, userId, ctx, env));
      }),
      { numRuns: 300 },
    );
  });

  it('the same user always gets the same variation (any compilation, any order of evaluation)', () => {
    fc.assert(
      fc.property(arbTypedFlag, fc.array(arbUserId, { minLength: 1, maxLength: 5 }), (flag, users) => {
        const first = compileFlag(flag);
        const answers = users.map((u) => first.evaluate(u, {}));
        const second = compileFlags([flag, flag]);
        [...users].reverse().forEach((u, i) => expect(second.flags[1].evaluate(u, {})).toEqual(answers[users.length - 1 - i]));
      }),
    );
  });
});

describe('splits', () => {
  it('the split bucket is bucketFor("split:<key>", user), independent of the rollout salt', () => {
    expect(splitBucket('checkout-copy', 'user-1')).toBe(bucketFor('split:checkout-copy', 'user-1'));
    expect(splitBucket('checkout-copy', 'user-1')).not.toBe(bucketFor('flag:checkout-copy', 'user-1'));
  });

  it('integer weights summing to 100 cover every bucket, each weight w taking w * 100 buckets in order', () => {
    const arbWeights = fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 10 }).filter((w) => w.reduce((a, b) => a + b, 0) > 0).map((w) => {
      const total = w.reduce((a, b) => a + b, 0);
      const scaled = w.map((x) => Math.floor((x * 100) / total));
      scaled[0] += 100 - scaled.reduce((a, b) => a + b, 0);
      return scaled;
    });
    fc.assert(
      fc.property(arbWeights, fc.integer({ min: 0, max: 9999 }), (weights, bucket) => {
        const split = weights.map((weight, i) => ({ variation: `v${i}`, weight }));
        const i = pickSplit(split, bucket);
        expect(i).toBeGreaterThanOrEqual(0);
        const before = weights.slice(0, i).reduce((a, b) => a + b, 0) * 100;
        expect(bucket).toBeGreaterThanOrEqual(before);
        expect(bucket).toBeLessThan(before + weights[i] * 100);
      }),
    );
  });

  it('the share of users each variation gets follows the weights', () => {
    fc.assert(
      fc.property(fc.constantFrom([50, 50], [10, 90], [20, 30, 50], [1, 99], [25, 25, 25, 25]), fc.string({ minLength: 1, maxLength: 12 }), (weights, key) => {
        const flag: FlagDefinition = {
          key, is_active: true, status: 'active', rollout_percentage: 100, value_type: 'string',
          variations: weights.map((_, i) => ({ key: `v${i}`, value: `value ${i}` })),
          variation_split: weights.map((weight, i) => ({ variation: `v${i}`, weight })),
        };
        const compiled = compileFlag(flag);
        const users = 20_000;
        const counts = new Map<string, number>();
        for (let u = 0; u < users; u++) {
          const v = compiled.evaluate(`user-${u}`, {}).variation!;
          counts.set(v, (counts.get(v) ?? 0) + 1);
        }
        // 20,000 users: a share is within 1.5 points of its weight far beyond 4 standard deviations.
        weights.forEach((w, i) => expect(Math.abs(((counts.get(`v${i}`) ?? 0) / users) * 100 - w)).toBeLessThan(1.5));
      }),
      { numRuns: 10 },
    );
  });
});

describe('validateTypedFields', () => {
  const base: TypedFields = {
    value_type: 'string',
    variations: [{ key: 'a', value: 'A' }, { key: 'b', value: 'B' }],
    default_variation: 'a', off_variation: null, variation_rules: null, variation_split: null,
  };
  const locs = (fields: Partial<TypedFields>) => validateTypedFields({ ...base, ...fields });

  it('accepts a complete string flag, and a boolean flag without typed fields', () => {
    expect(locs({})).toEqual([]);
    expect(validateTypedFields({ value_type: 'boolean', variations: null, default_variation: null, off_variation: null, variation_rules: null, variation_split: null })).toEqual([]);
  });

  it('names each problem at its place', () => {
    expect(locs({ variations: [{ key: 'a', value: 1 }, { key: 'a', value: 'B' }] })).toEqual([
      { loc: ['variations', 0, 'value'], msg: VARIATION_MESSAGES.wrongType.string },
      { loc: ['variations', 1, 'key'], msg: VARIATION_MESSAGES.duplicateKey },
    ]);
    expect(locs({ value_type: 'number', variations: [{ key: 'a', value: 1 }, { key: 'b', value: Number.NaN }] })).toEqual([{ loc: ['variations', 1, 'value'], msg: VARIATION_MESSAGES.wrongType.number }]);
    expect(locs({ value_type: 'json', variations: [{ key: 'a', value: [] }, { key: 'b', value: 'x' }] })).toEqual([{ loc: ['variations', 1, 'value'], msg: VARIATION_MESSAGES.wrongType.json }]);
    expect(locs({ value_type: 'json', variations: [{ key: 'a', value: { s: 'x'.repeat(32 * 1024) } }, { key: 'b', value: {} }] })).toEqual([{ loc: ['variations', 0, 'value'], msg: VARIATION_MESSAGES.valueTooLarge }]);
    expect(locs({ default_variation: 'zz', off_variation: 'yy' })).toEqual([
      { loc: ['default_variation'], msg: VARIATION_MESSAGES.unknownVariation },
      { loc: ['off_variation'], msg: VARIATION_MESSAGES.unknownVariation },
    ]);
    expect(locs({ default_variation: null, variation_split: [{ variation: 'a', weight: 60 }, { variation: 'b', weight: 30 }] })).toEqual([{ loc: ['variation_split'], msg: VARIATION_MESSAGES.weightsSum }]);
    expect(locs({ variation_split: [{ variation: 'a', weight: 100 }] })).toEqual([{ loc: ['variation_split'], msg: VARIATION_MESSAGES.defaultAndSplit }]);
    expect(locs({ default_variation: null })).toEqual([{ loc: ['default_variation'], msg: VARIATION_MESSAGES.defaultRequired }]);
    expect(locs({ variation_rules: [{ targeting_rules: {}, variation: 'a', split: [{ variation: 'q', weight: 100 }] }] })).toEqual([
      { loc: ['variation_rules', 0], msg: VARIATION_MESSAGES.ruleServesOne },
      { loc: ['variation_rules', 0, 'split', 0, 'variation'], msg: VARIATION_MESSAGES.unknownVariation },
    ]);
    expect(locs({ variations: [{ key: 'a', value: 'A' }] })).toEqual([{ loc: ['variations'], msg: VARIATION_MESSAGES.variationsRequired }]);
  });

  it('a boolean flag refuses every typed field', () => {
    expect(validateTypedFields({ ...base, value_type: 'boolean' }).map((p) => p.loc)).toEqual([['variations'], ['default_variation']]);
  });

  it('messages never contain the values sent', () => {
    for (const p of locs({ variations: [{ key: 'a', value: 12345 }, { key: 'b', value: 'B' }], default_variation: 'secret-key' })) {
      expect(p.msg).not.toContain('12345');
      expect(p.msg).not.toContain('secret-key');
    }
  });
});
