import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileFlag } from './compile-flag.js';
import { compileRuleSet } from './compile.js';
import { arbAnyRules, arbContext, arbContextValue, arbEnv, arbRuleValue, COMMON, ODD, outcome, PATTERNS, pick, SCALARS } from './compile.arbitraries.js';
import { evaluateRuleSet, explainRuleSet } from './evaluate.js';
import { OPERATORS, type CompiledSegment, type EvaluationEnv } from './types.js';

// The interpreted evaluator (evaluate.ts) is the reference: the compiled one must answer the same for every rule set,
// context and segment table, errors included. Flags: compile-flag.test.ts.

// ---- equivalence -----------------------------------------------------------------------------

describe('compiled rule sets answer as the interpreted reference', () => {
  it('evaluate: same result or same SegmentError, for any rules, context and segments', () => {
    fc.assert(
      fc.property(arbAnyRules, fc.array(arbContext, { minLength: 1, maxLength: 4 }), arbEnv, (rules, contexts, env) => {
        // Compiled once, evaluated for several contexts in turn: nothing carries over between calls.
        const compiled = compileRuleSet(rules);
        for (const ctx of [...contexts, contexts[0]]) {
          expect(outcome(() => compiled.evaluate(ctx, env))).toEqual(outcome(() => evaluateRuleSet(rules, ctx, env)));
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('explain: same match and the same satisfied conditions, in order', () => {
    fc.assert(
      fc.property(arbAnyRules, arbContext, arbEnv, (rules, ctx, env) => {
        expect(outcome(() => compileRuleSet(rules).explain(ctx, env))).toEqual(outcome(() => explainRuleSet(rules, ctx, env)));
      }),
      { numRuns: 1000 },
    );
  });

  it('each operator on each kind of context value, the value often taken from the rule itself', () => {
    const operators = [...OPERATORS.filter((o) => o !== 'in_segment' && o !== 'not_in_segment'), 'bogus'];
    const arbCase = fc.constantFrom(...operators).chain((operator) =>
      arbRuleValue(operator).chain((value) => {
        const fromRule = Array.isArray(value) && value.length > 0 ? fc.constantFrom(...value, value) : fc.constant(value);
        const actual = fc.oneof(fromRule, arbContextValue, pick(COMMON), pick(ODD), fc.constant(undefined));
        return fc.tuple(fc.constant(operator), fc.constant(value), actual, fc.boolean());
      }),
    );
    fc.assert(
      fc.property(arbCase, ([operator, value, actual, negate]) => {
        const rules = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'x', operator, value, negate }] }] };
        const ctx = { x: actual };
        expect(compileRuleSet(rules).explain(ctx)).toEqual(explainRuleSet(rules, ctx));
      }),
      { numRuns: 10_000 },
    );
  });

  it('every operator, every rule value and every context value of the pools (exhaustive grid)', () => {
    const operators = [...OPERATORS.filter((o) => o !== 'in_segment' && o !== 'not_in_segment'), 'bogus'];
    // Lists mixing types: a numeric string element equals a number context value, not another numeric string.
    const values: unknown[] = [...SCALARS, ...PATTERNS, ...ODD, undefined, ['US', 18], ['18', true], [1.5, 'false', null], [17, '18']];
    const actuals: unknown[] = [...SCALARS, ...ODD, undefined, ['US', 'CA'], [18, 'true'], ['1.5', false]];
    for (const operator of operators) {
      for (const value of values) {
        const rules = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'x', operator, value }] }] };
        const compiled = compileRuleSet(rules);
        for (const x of actuals) {
          if (compiled.evaluate({ x }) !== evaluateRuleSet(rules, { x })) {
            expect({ operator, value, x, compiled: compiled.evaluate({ x }) }).toEqual({ operator, value, x, compiled: evaluateRuleSet(rules, { x }) });
          }
        }
      }
    }
  });

  it('segments in a cycle with side branches fail on the same segment as the reference', () => {
    const link = (...ids: string[]) => ({
      logical_operator: 'OR',
      groups: [{ logical_operator: 'OR', conditions: ids.map((value) => ({ attribute: 'segment', operator: 'in_segment', value })) }],
    });
    // a → b → (c → ids, a): the cycle closes after a side branch that nests fine.
    const table: Record<string, CompiledSegment> = {
      a: { kind: 'rules', valid: true, rules: link('b') },
      b: { kind: 'rules', valid: true, rules: link('c', 'a') },
      c: { kind: 'rules', valid: true, rules: link('ids') },
      ids: { kind: 'id_list', has: () => true },
    };
    const env: EvaluationEnv = { segments: (id) => table[id] };
    const rules = link('a');
    const reference = outcome(() => evaluateRuleSet(rules, {}, env));
    expect(reference).toEqual({ segmentError: { segmentId: 'a', problem: 'recursion' } });
    expect(outcome(() => compileRuleSet(rules).evaluate({}, env))).toEqual(reference);
  });

  it('without an env, any segment is missing', () => {
    fc.assert(
      fc.property(arbAnyRules, arbContext, (rules, ctx) => {
        expect(outcome(() => compileRuleSet(rules).evaluate(ctx))).toEqual(outcome(() => evaluateRuleSet(rules, ctx)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('compiled evaluation does no needless work', () => {
  const rules = {
    logical_operator: 'AND',
    groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'in', value: ['US', 'CA'] }] }],
  };
  it('evaluate answers shared frozen objects', () => {
    const flag = compileFlag({ key: 'f', is_active: true, rollout_percentage: 100, targeting_rules: rules });
    const a = flag.evaluate('u1', { country: 'US' });
    expect(a).toEqual({ enabled: true, reason: 'targeting_match' });
    expect(flag.evaluate('u2', { country: 'CA' })).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
  });
  it('renders condition text only when explained, once', () => {
    let rendered = 0;
    const value = ['US', 'CA'];
    Object.defineProperty(value, 'toJSON', { value: () => (rendered++, 'US or CA'), enumerable: false });
    const withCounter = { ...rules, groups: [{ ...rules.groups[0], conditions: [{ attribute: 'country', operator: 'in', value }] }] };
    const flag = compileFlag({ key: 'f', is_active: true, rollout_percentage: 100, targeting_rules: withCounter });
    const set = compileRuleSet(withCounter);
    for (let i = 0; i < 3; i++) {
      flag.evaluate(`u${i}`, { country: 'US' });
      set.evaluate({ country: 'US' });
    }
    expect(rendered).toBe(0);
    expect(flag.explain('u1', { country: 'US' }).rule).toBe('country in "US or CA"');
    flag.explain('u2', { country: 'US' });
    expect(rendered).toBe(1);
  });
  it('parses rule values when compiled, not per evaluation', () => {
    let reads = 0;
    const condition = { attribute: 'v', operator: 'semver_gte', negate: false } as Record<string, unknown>;
    Object.defineProperty(condition, 'value', { get: () => (reads++, '1.2.0'), enumerable: true });
    const set = compileRuleSet({ logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [condition] }] });
    const before = reads;
    expect(set.evaluate({ v: '1.10.0' })).toBe(true);
    expect(set.evaluate({ v: '1.1.9' })).toBe(false);
    expect(reads).toBe(before);
  });
});
