import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileFlag, compileFlags } from './compile-flag.js';
import { arbContext, arbEnv, arbFlag, arbUserId, arbValueCondition, envOf } from './compile.arbitraries.js';
import { evaluateFlag, type FlagDefinition } from './flag.js';
import type { EvaluationEnv } from './types.js';

// The interpreted flag evaluator (flag.ts) is the reference: compiled flags, alone or compiled together, must answer
// the same for every flag, context and segment table, errors included.

describe('compiled flags answer as evaluateFlag', () => {
  it('explain: the same answer, rule text included; evaluate: the same without the rule', () => {
    fc.assert(
      fc.property(arbFlag, fc.array(fc.tuple(arbUserId, arbContext), { minLength: 1, maxLength: 3 }), arbEnv, (flag, requests, env) => {
        const compiled = compileFlag(flag);
        for (const [userId, ctx] of requests) {
          const reference = evaluateFlag(flag, userId, ctx, env);
          expect(compiled.explain(userId, ctx, env)).toEqual(reference);
          const { rule: _rule, ...withoutRule } = reference;
          expect(compiled.evaluate(userId, ctx, env)).toEqual(withoutRule);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('flags compiled together (shared attributes and conditions) answer each as evaluateFlag', () => {
    // Few attributes and values so that flags repeat conditions, as flags of one ruleset do.
    const arbShared = fc.constantFrom(
      { attribute: 'country', operator: 'in', value: ['US', 'CA'] },
      { attribute: 'country', operator: 'equals', value: 'US' },
      { attribute: 'country', operator: 'equals', value: 'US', negate: true },
      { attribute: 'plan', operator: 'equals', value: 'pro', negate: true },
      { attribute: 'plan', operator: 'equals', value: 'pro' },
      { attribute: 'version', operator: 'semver_gte', value: '1.2.0' },
      { attribute: 'age', operator: 'gte', value: 18 },
      { attribute: 'user_id', operator: 'starts_with', value: 'u' },
      { attribute: 'tags', operator: 'contains', value: 'US' },
      { attribute: 'country', operator: 'is_null' },
      { attribute: 'segment', operator: 'in_segment', value: 'ids' },
      { attribute: 'segment', operator: 'not_in_segment', value: 'throws' },
    );
    const arbSharedRules = fc.record({
      logical_operator: fc.constantFrom('AND', 'OR'),
      groups: fc.array(fc.record({ logical_operator: fc.constantFrom('AND', 'OR'), conditions: fc.array(fc.oneof(arbShared, arbValueCondition), { maxLength: 3 }) }), { maxLength: 2 }),
    });
    const arbSetFlag = fc.oneof(arbFlag, arbFlag.chain((f) => arbSharedRules.map((targeting_rules) => ({ ...f, targeting_rules }))));
    fc.assert(
      fc.property(fc.array(arbSetFlag, { maxLength: 8 }), fc.array(fc.tuple(arbUserId, arbContext), { minLength: 1, maxLength: 3 }), arbEnv, (flags, requests, env) => {
        const set = compileFlags(flags);
        for (const [userId, ctx] of requests) {
          const all = set.evaluateAll(userId, ctx, env);
          const enabled = set.enabledAll(userId, ctx, env);
          flags.forEach((flag, i) => {
            const { rule: _rule, ...reference } = evaluateFlag(flag, userId, ctx, env);
            expect(all[i]).toEqual(reference);
            expect(enabled[i]).toBe(reference.enabled);
            expect(set.flags[i].evaluate(userId, ctx, env)).toEqual(reference);
            expect(set.flags[i].explain(userId, ctx, env)).toEqual(evaluateFlag(flag, userId, ctx, env));
          });
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('rules see the user id unless the context sets its own user_id', () => {
    const flag = compileFlag({
      key: 'f', is_active: true, rollout_percentage: 100,
      targeting_rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'user_id', operator: 'equals', value: 'u1' }] }] },
    });
    expect(flag.explain('u1', {})).toEqual({ enabled: true, reason: 'targeting_match', rule: 'user_id equals u1' });
    expect(flag.evaluate('u1', 'not an object').enabled).toBe(true);
    expect(flag.evaluate('u1', { user_id: 'u2' }).reason).toBe('targeting_miss');
    expect(flag.evaluate('u2', { user_id: 'u1' }).reason).toBe('targeting_match');
    expect(flag.evaluate('u2', { user: { user_id: 'u1' } }).reason).toBe('targeting_miss');
  });

  it('an id_list membership that fails is an error even where the answer is already known, as in the reference', () => {
    const flag: FlagDefinition = {
      key: 'f', is_active: true,
      targeting_rules: {
        logical_operator: 'OR',
        groups: [{ logical_operator: 'OR', conditions: [{ attribute: 'country', operator: 'equals', value: 'US' }, { attribute: 'segment', operator: 'in_segment', value: 'throws' }] }],
      },
    };
    const env = envOf(null, null);
    expect(evaluateFlag(flag, 'u1', { country: 'US' }, env)).toEqual({ enabled: false, reason: 'error' });
    expect(compileFlag(flag).evaluate('u1', { country: 'US' }, env)).toEqual({ enabled: false, reason: 'error' });
  });
});

describe('flags compiled together share work within one evaluation only', () => {
  const flag = (key: string, conditions: object[]): FlagDefinition => ({
    key, is_active: true, rollout_percentage: 100, targeting_rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions }] },
  });
  const usFlags = Array.from({ length: 10 }, (_, i) =>
    flag(`f${i}`, [{ attribute: 'country', operator: 'equals', value: 'US' }, { attribute: 'country', operator: 'in', value: ['US', `X${i}`] }]),
  );
  /** A context counting reads of `country`. */
  function counting(country: string) {
    const ctx = { reads: 0, value: country };
    return { ctx, context: Object.defineProperty({}, 'country', { get: () => (ctx.reads++, ctx.value), enumerable: true }) };
  }

  it('reads an attribute once for every flag, and again on the next evaluation', () => {
    const set = compileFlags(usFlags);
    const { ctx, context } = counting('US');
    expect(set.evaluateAll('u1', context).every((e) => e.enabled)).toBe(true);
    expect(ctx.reads).toBe(1);
    ctx.value = 'FR';
    expect(set.evaluateAll('u1', context).some((e) => e.enabled)).toBe(false);
    expect(ctx.reads).toBe(2);
    // One flag alone is its own evaluation: nothing carried over from evaluateAll.
    ctx.value = 'US';
    expect(set.flags[0].evaluate('u1', context).enabled).toBe(true);
  });

  it('shares only conditions whose values are told apart exactly', () => {
    const mimic = { toJSON: () => 'US' };
    const flags = [
      flag('a', [{ attribute: 'country', operator: 'equals', value: mimic }]),
      flag('b', [{ attribute: 'country', operator: 'equals', value: 'US' }]),
      flag('c', [{ attribute: 'n', operator: 'in', value: [1, undefined] }, { attribute: 'n', operator: 'is_not_null' }]),
      flag('d', [{ attribute: 'n', operator: 'in', value: [1, null] }]),
    ];
    const ctx = { country: 'US', n: 1 };
    expect(compileFlags(flags).evaluateAll('u1', ctx)).toEqual(flags.map((f) => evaluateFlag(f, 'u1', ctx)).map(({ rule: _r, ...e }) => e));
    expect(compileFlags(flags).evaluateAll('u1', ctx).map((e) => e.enabled)).toEqual([false, true, true, true]);
  });

  it('an evaluation started inside another (from a segment lookup) neither sees nor spoils the outer one', () => {
    const set = compileFlags([...usFlags, flag('seg', [{ attribute: 'segment', operator: 'in_segment', value: 'inner' }]), ...usFlags]);
    const inner = compileFlags(usFlags);
    const seen: boolean[] = [];
    const env: EvaluationEnv = {
      segments: () => {
        seen.push(...inner.evaluateAll('u2', { country: 'FR' }).map((e) => e.enabled));
        return { kind: 'id_list', has: () => true };
      },
    };
    const all = set.evaluateAll('u1', { country: 'US' }, env);
    expect(all.map((e) => e.enabled)).toEqual(all.map(() => true));
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((enabled) => !enabled)).toBe(true);
  });
});
