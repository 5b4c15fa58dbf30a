import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileFlag, compileFlags } from './compile-flag.js';
import { compileRuleSet } from './compile.js';
import { evaluateRuleSet, explainRuleSet, SegmentError } from './evaluate.js';
import { evaluateFlag, type FlagDefinition } from './flag.js';
import { OPERATORS, type CompiledSegment, type EvaluationEnv } from './types.js';

// The interpreted evaluator (evaluate.ts, flag.ts) is the reference: the compiled one must answer the same for every
// rule set, flag, context and segment table, errors included.

type Outcome<T> = { value: T } | { segmentError: { segmentId: string; problem: string } } | { thrown: string };

function outcome<T>(run: () => T): Outcome<T> {
  try {
    return { value: run() };
  } catch (e) {
    if (e instanceof SegmentError) return { segmentError: { segmentId: e.segmentId, problem: e.problem } };
    return { thrown: String(e) };
  }
}

// ---- arbitraries -----------------------------------------------------------------------------

const ATTRIBUTES = [
  'country', 'plan', 'age', 'version', 'signup', 'tags', 'user.country', 'user.age', 'user_id', 'user.user_id',
  'user_id.x', 'a.b.c', 'a.b', '', 'constructor', '__proto__', 'toString', 'user', 'meta.', '.x',
];
// Values by the operators they suit, so that conditions often hold; every operator also gets the others (malformed
// rule values, context values of the wrong kind).
const TEXTS: unknown[] = ['US', 'CA', 'USA', 'us', 'pro', '', 'true', 'false', 'é', '😀', '\ud800', 'a\u0000b', true, false];
const NUMBERS: unknown[] = [0, -0, 17, 18, 19, 1.5, -3, 1e21, '18', '18.0', '19', '1.5e1', ' 18', '0x10', '-0', '.5'];
const VERSIONS: unknown[] = ['1.2.3', 'v1.2', '1.2', '2', '1.10.0', '1.2.3-rc.1', '1.2.3-rc.2', '1.2.3-1', '1.2.3-alpha', '1.2.3-alpha.beta', '1.2.3+b7', '01.2.3', 'V1.2.3-rc.1+x'];
const DATES: unknown[] = ['2024-01-01', '2024-06-01T10:00:00Z', '2024-01-01T00:00:00+02:00', '2024-01-01 12:30', '2023-12-31T23:00:00-0100', '2024-02-30', '2024-01-01T25:00', 1704067200000, 1717200000000];
const PATTERNS: unknown[] = ['(?i)^us$', '^U', 'S$', '[', 'a.*b', '(?P<x>a)', '\\d+', '^$', '(a)\\1', 'x'.repeat(501)];
const ODD: unknown[] = [null, Number.NaN, Number.POSITIVE_INFINITY, 1e300, [], {}, { a: 1 }];
const SCALARS = [...TEXTS, ...NUMBERS, ...VERSIONS, ...DATES];
/** Values rules and contexts share often, so that equality holds often, across types too (18 = "18" = "18.0"). */
const COMMON: unknown[] = ['US', 'us', 18, '18', '18.0', true, 'true', 'false', '1.2.3', 'v1.2', '2024-01-01', 1704067200000];
const SEGMENT_IDS: unknown[] = [
  'ids', 'ids2', 'throws', 'rulesA', 'rulesB', 'rulesC', 'invalid', 'notshape', 'nullrules', 'weird', 'missing', 'envthrows',
  'cyc', 'deep1', 'deep2', 'deep3', '', 5, null,
];

const pick = (values: unknown[]) => fc.constantFrom(...values);
const arbScalar = fc.oneof(pick(COMMON), pick(SCALARS));
const arbList = fc.array(fc.oneof(arbScalar, pick(ODD)), { maxLength: 5 });
const arbOdd = fc.oneof(pick(ODD), arbList, fc.jsonValue({ maxDepth: 2 }), fc.string(), fc.constant(undefined));

function arbRuleValue(operator: string): fc.Arbitrary<unknown> {
  const suited: Record<string, fc.Arbitrary<unknown>> = {
    in: arbList, not_in: arbList,
    regex: pick(PATTERNS), not_regex: pick(PATTERNS),
    gt: pick(NUMBERS), gte: pick(NUMBERS), lt: pick(NUMBERS), lte: pick(NUMBERS),
    semver_eq: pick(VERSIONS), semver_gt: pick(VERSIONS), semver_gte: pick(VERSIONS), semver_lt: pick(VERSIONS), semver_lte: pick(VERSIONS),
    before: pick(DATES), after: pick(DATES),
  };
  return fc.oneof({ weight: 6, arbitrary: suited[operator] ?? arbScalar }, { weight: 1, arbitrary: arbScalar }, { weight: 1, arbitrary: arbOdd });
}
const arbAttribute = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('country', 'plan', 'age', 'version', 'signup', 'tags', 'user.country', 'user_id') },
  { weight: 1, arbitrary: fc.constantFrom(...ATTRIBUTES) },
);
const arbNegate = fc.constantFrom(true, false, undefined, 'true', 1);
const without = <T extends Record<string, unknown>>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const arbValueCondition = fc
  .tuple(fc.constantFrom(...OPERATORS.filter((o) => o !== 'in_segment' && o !== 'not_in_segment'), 'bogus'), arbAttribute, arbNegate)
  .chain(([operator, attribute, negate]) =>
    arbRuleValue(operator).map((value) => without({ attribute, operator, value, negate, id: 'ui-1' })),
  );
const arbSegmentCondition = fc
  .record({
    attribute: fc.constant('segment'),
    operator: fc.constantFrom('in_segment', 'not_in_segment'),
    value: fc.constantFrom(...SEGMENT_IDS),
    negate: arbNegate,
  })
  .map(without);

function arbRuleSet(withSegments: boolean) {
  const condition = withSegments
    ? fc.oneof({ weight: 3, arbitrary: arbValueCondition }, { weight: 1, arbitrary: arbSegmentCondition })
    : arbValueCondition;
  return fc
    .record({
      logical_operator: fc.constantFrom('AND', 'OR'),
      negate: arbNegate,
      groups: fc.array(
        fc.record({ logical_operator: fc.constantFrom('AND', 'OR'), negate: arbNegate, conditions: fc.array(condition, { maxLength: 4 }) }).map(without),
        { maxLength: 4 },
      ),
    })
    .map(without);
}

/** Rule sets, empty ones, and values not in the format (old format, some naming segments), which evaluate to false. */
const arbAnyRules = fc.oneof(
  { weight: 8, arbitrary: arbRuleSet(true) },
  { weight: 1, arbitrary: fc.constantFrom({ logical_operator: 'OR', groups: [] }, { logical_operator: 'AND', groups: [{ logical_operator: 'OR', conditions: [] }] }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(
      null,
      'x',
      [],
      { conditions: [{ attribute: 'country', operator: 'equals', value: 'US' }] },
      { logical_operator: 'XOR', groups: [] },
      { groups: [{ conditions: [{ attribute: 'segment', operator: 'in_segment', value: 'missing' }] }] },
      { groups: [{ conditions: [{ attribute: 'segment', operator: 'in_segment', value: 'ids' }] }] },
      { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 1, operator: 'equals' }] }] },
    ),
  },
);

const finite = (v: unknown) => typeof v !== 'number' || Number.isFinite(v);
const arbContextValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.oneof(pick(COMMON), pick(SCALARS.filter(finite))) },
  { weight: 2, arbitrary: fc.array(fc.oneof(pick(COMMON), pick(SCALARS.filter(finite))), { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
const arbUser = fc.record({ country: arbContextValue, age: arbContextValue, user_id: arbContextValue, plan: arbContextValue }, { requiredKeys: [] });
/** Most attributes the rules read, at the top level, under `user` (nested and dotted) and deeper. */
const arbObject = fc
  .tuple(
    fc.record(
      {
        country: arbContextValue, plan: arbContextValue, age: arbContextValue, version: arbContextValue, signup: arbContextValue,
        tags: arbContextValue, user_id: arbContextValue, user: fc.oneof(arbUser, arbContextValue), 'user.country': arbContextValue,
        'user.user_id': arbContextValue, a: fc.oneof(fc.record({ b: fc.oneof(fc.record({ c: arbContextValue }), arbContextValue) }), arbContextValue),
        'a.b': arbContextValue, constructor: arbContextValue, meta: fc.constant({ '': 'x' }),
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(fc.constantFrom(...ATTRIBUTES), arbContextValue, { maxKeys: 3 }),
    fc.option(arbContextValue, { nil: undefined }),
  )
  .map(([known, extra, proto]) => {
    // As JSON delivers it: parsed, so a `__proto__` key is an own property like any other.
    const json = JSON.stringify({ ...extra, ...known });
    return proto === undefined ? json : `{"__proto__":${JSON.stringify(proto)}${json === '{}' ? '}' : `,${json.slice(1)}`}`;
  });
/** Contexts as JSON delivers them, and a few that are not objects. */
const arbContext: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: arbObject.map((json) => JSON.parse(json) as unknown) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, [], ['US'], 'US', 5) },
);
const arbUserId = fc.oneof(fc.constantFrom('u1', 'u2', 'alice', 'bob', '', 'ü-1'), fc.string());

/** A segment table with every kind of segment and every way of failing to resolve one. */
function envOf(rulesA: unknown, rulesB: unknown, rulesC: unknown = rulesB): EvaluationEnv {
  const members = new Set(['u1', 'alice', 'US']);
  const link = (id: string): unknown => ({
    logical_operator: 'AND',
    groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'segment', operator: 'in_segment', value: id }] }],
  });
  const table: Record<string, CompiledSegment> = {
    ids: { kind: 'id_list', has: (u) => members.has(u) },
    // Truthy is not enough: only `true` makes a member.
    ids2: { kind: 'id_list', has: (u) => (u.startsWith('u') ? true : u.startsWith('a') || u.startsWith('U') ? ('yes' as unknown as boolean) : false) },
    throws: {
      kind: 'id_list',
      has: () => {
        throw new Error('membership unavailable');
      },
    },
    rulesA: { kind: 'rules', valid: true, rules: rulesA },
    rulesB: { kind: 'rules', valid: true, rules: rulesB },
    rulesC: { kind: 'rules', valid: true, rules: rulesC },
    invalid: { kind: 'rules', valid: false, rules: rulesB },
    notshape: { kind: 'rules', valid: true, rules: { conditions: [] } },
    nullrules: { kind: 'rules', valid: true, rules: null },
    weird: { kind: 'other' } as unknown as CompiledSegment,
    cyc: { kind: 'rules', valid: true, rules: link('cyc') },
    // deep1 → deep2 → … → deep5 → ids: too deep from deep1 and deep2, fine from deep3.
    deep1: { kind: 'rules', valid: true, rules: link('deep2') },
    deep2: { kind: 'rules', valid: true, rules: link('deep3') },
    deep3: { kind: 'rules', valid: true, rules: link('deep4') },
    deep4: { kind: 'rules', valid: true, rules: link('deep5') },
    deep5: { kind: 'rules', valid: true, rules: link('ids') },
  };
  return {
    segments: (id) => {
      if (id === 'envthrows') throw new Error('segment store down');
      return Object.prototype.hasOwnProperty.call(table, id) ? table[id] : undefined;
    },
  };
}
/** rulesA and rulesC may name any segment (themselves, each other: cycles with side branches), rulesB none. */
const arbEnv = fc.tuple(arbRuleSet(true), arbRuleSet(false), arbRuleSet(true)).map(([a, b, c]) => envOf(a, b, c));

const arbFlag: fc.Arbitrary<FlagDefinition> = fc.record({
  key: fc.oneof(fc.constantFrom('new-checkout', 'k'), fc.string()),
  is_active: fc.constantFrom(true, true, true, true, true, false, 'true' as unknown as boolean),
  status: fc.constantFrom('active', 'active', 'active', 'inactive', 'archived', null, undefined),
  rollout_percentage: fc.constantFrom(null, undefined, 0, 0.004, 0.01, 33.33, 50, 99.99, 100, 150, -5, Number.NaN, Number.POSITIVE_INFINITY),
  targeting_rules: fc.oneof({ weight: 1, arbitrary: fc.constantFrom(null, undefined) }, { weight: 5, arbitrary: arbAnyRules }),
});

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
