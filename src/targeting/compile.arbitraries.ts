/**
 * Shared by the compiled evaluator's property tests (compile.test.ts, compile-flag.test.ts): value pools, arbitrary
 * rule sets, contexts, segment tables and flags, and the outcome of a run with its error. Test code only: not built.
 */
import fc from 'fast-check';
import { SegmentError } from './evaluate.js';
import type { FlagDefinition } from './flag.js';
import { OPERATORS, type CompiledSegment, type EvaluationEnv } from './types.js';

export type Outcome<T> = { value: T } | { segmentError: { segmentId: string; problem: string } } | { thrown: string };

export function outcome<T>(run: () => T): Outcome<T> {
  try {
    return { value: run() };
  } catch (e) {
    if (e instanceof SegmentError) return { segmentError: { segmentId: e.segmentId, problem: e.problem } };
    return { thrown: String(e) };
  }
}

// ---- arbitraries -----------------------------------------------------------------------------

export const ATTRIBUTES = [
  'country', 'plan', 'age', 'version', 'signup', 'tags', 'user.country', 'user.age', 'user_id', 'user.user_id',
  'user_id.x', 'a.b.c', 'a.b', '', 'constructor', '__proto__', 'toString', 'user', 'meta.', '.x',
];
// Values by the operators they suit, so that conditions often hold; every operator also gets the others (malformed
// rule values, context values of the wrong kind).
export const TEXTS: unknown[] = ['US', 'CA', 'USA', 'us', 'pro', '', 'true', 'false', 'é', '😀', '\ud800', 'a\u0000b', true, false];
export const NUMBERS: unknown[] = [0, -0, 17, 18, 19, 1.5, -3, 1e21, '18', '18.0', '19', '1.5e1', ' 18', '0x10', '-0', '.5'];
export const VERSIONS: unknown[] = ['1.2.3', 'v1.2', '1.2', '2', '1.10.0', '1.2.3-rc.1', '1.2.3-rc.2', '1.2.3-1', '1.2.3-alpha', '1.2.3-alpha.beta', '1.2.3+b7', '01.2.3', 'V1.2.3-rc.1+x'];
export const DATES: unknown[] = ['2024-01-01', '2024-06-01T10:00:00Z', '2024-01-01T00:00:00+02:00', '2024-01-01 12:30', '2023-12-31T23:00:00-0100', '2024-02-30', '2024-01-01T25:00', 1704067200000, 1717200000000];
export const PATTERNS: unknown[] = ['(?i)^us$', '^U', 'S$', '[', 'a.*b', '(?P<x>a)', '\\d+', '^$', '(a)\\1', 'x'.repeat(501)];
export const ODD: unknown[] = [null, Number.NaN, Number.POSITIVE_INFINITY, 1e300, [], {}, { a: 1 }];
export const SCALARS = [...TEXTS, ...NUMBERS, ...VERSIONS, ...DATES];
/** Values rules and contexts share often, so that equality holds often, across types too (18 = "18" = "18.0"). */
export const COMMON: unknown[] = ['US', 'us', 18, '18', '18.0', true, 'true', 'false', '1.2.3', 'v1.2', '2024-01-01', 1704067200000];
export const SEGMENT_IDS: unknown[] = [
  'ids', 'ids2', 'throws', 'rulesA', 'rulesB', 'rulesC', 'invalid', 'notshape', 'nullrules', 'weird', 'missing', 'envthrows',
  'cyc', 'deep1', 'deep2', 'deep3', '', 5, null,
];

export const pick = (values: unknown[]) => fc.constantFrom(...values);
export const arbScalar = fc.oneof(pick(COMMON), pick(SCALARS));
export const arbList = fc.array(fc.oneof(arbScalar, pick(ODD)), { maxLength: 5 });
export const arbOdd = fc.oneof(pick(ODD), arbList, fc.jsonValue({ maxDepth: 2 }), fc.string(), fc.constant(undefined));

export function arbRuleValue(operator: string): fc.Arbitrary<unknown> {
  const suited: Record<string, fc.Arbitrary<unknown>> = {
    in: arbList, not_in: arbList,
    regex: pick(PATTERNS), not_regex: pick(PATTERNS),
    gt: pick(NUMBERS), gte: pick(NUMBERS), lt: pick(NUMBERS), lte: pick(NUMBERS),
    semver_eq: pick(VERSIONS), semver_gt: pick(VERSIONS), semver_gte: pick(VERSIONS), semver_lt: pick(VERSIONS), semver_lte: pick(VERSIONS),
    before: pick(DATES), after: pick(DATES),
  };
  return fc.oneof({ weight: 6, arbitrary: suited[operator] ?? arbScalar }, { weight: 1, arbitrary: arbScalar }, { weight: 1, arbitrary: arbOdd });
}
export const arbAttribute = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('country', 'plan', 'age', 'version', 'signup', 'tags', 'user.country', 'user_id') },
  { weight: 1, arbitrary: fc.constantFrom(...ATTRIBUTES) },
);
export const arbNegate = fc.constantFrom(true, false, undefined, 'true', 1);
export const without = <T extends Record<string, unknown>>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

export const arbValueCondition = fc
  .tuple(fc.constantFrom(...OPERATORS.filter((o) => o !== 'in_segment' && o !== 'not_in_segment'), 'bogus'), arbAttribute, arbNegate)
  .chain(([operator, attribute, negate]) =>
    arbRuleValue(operator).map((value) => without({ attribute, operator, value, negate, id: 'ui-1' })),
  );
export const arbSegmentCondition = fc
  .record({
    attribute: fc.constant('segment'),
    operator: fc.constantFrom('in_segment', 'not_in_segment'),
    value: fc.constantFrom(...SEGMENT_IDS),
    negate: arbNegate,
  })
  .map(without);

export function arbRuleSet(withSegments: boolean) {
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
export const arbAnyRules = fc.oneof(
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

export const finite = (v: unknown) => typeof v !== 'number' || Number.isFinite(v);
export const arbContextValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.oneof(pick(COMMON), pick(SCALARS.filter(finite))) },
  { weight: 2, arbitrary: fc.array(fc.oneof(pick(COMMON), pick(SCALARS.filter(finite))), { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
export const arbUser = fc.record({ country: arbContextValue, age: arbContextValue, user_id: arbContextValue, plan: arbContextValue }, { requiredKeys: [] });
/** Most attributes the rules read, at the top level, under `user` (nested and dotted) and deeper. */
export const arbObject = fc
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
export const arbContext: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: arbObject.map((json) => JSON.parse(json) as unknown) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, [], ['US'], 'US', 5) },
);
export const arbUserId = fc.oneof(fc.constantFrom('u1', 'u2', 'alice', 'bob', '', 'ü-1'), fc.string());

/** A segment table with every kind of segment and every way of failing to resolve one. */
export function envOf(rulesA: unknown, rulesB: unknown, rulesC: unknown = rulesB): EvaluationEnv {
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
export const arbEnv = fc.tuple(arbRuleSet(true), arbRuleSet(false), arbRuleSet(true)).map(([a, b, c]) => envOf(a, b, c));

export const arbFlag: fc.Arbitrary<FlagDefinition> = fc.record({
  key: fc.oneof(fc.constantFrom('new-checkout', 'k'), fc.string()),
  is_active: fc.constantFrom(true, true, true, true, true, false, 'true' as unknown as boolean),
  status: fc.constantFrom('active', 'active', 'active', 'inactive', 'archived', null, undefined),
  rollout_percentage: fc.constantFrom(null, undefined, 0, 0.004, 0.01, 33.33, 50, 99.99, 100, 150, -5, Number.NaN, Number.POSITIVE_INFINITY),
  targeting_rules: fc.oneof({ weight: 1, arbitrary: fc.constantFrom(null, undefined) }, { weight: 5, arbitrary: arbAnyRules }),
});

const VARIATION_KEYS = ['a', 'b', 'c', 'd'];
const arbSplit = fc.array(fc.record({ variation: fc.constantFrom(...VARIATION_KEYS, 'unknown'), weight: fc.constantFrom(0, 10, 25, 50, 100, 33.3, -5) }), { minLength: 1, maxLength: 4 });

/** A typed flag (variations.ts): a flag of arbFlag with variations, rules (naming unknown variations too) and splits. */
export const arbTypedFlag: fc.Arbitrary<FlagDefinition> = arbFlag.chain((flag) =>
  fc.record({
    value_type: fc.constantFrom('string', 'number', 'json') as fc.Arbitrary<'string' | 'number' | 'json'>,
    variations: fc.constant(VARIATION_KEYS.map((key, i) => ({ key, value: `v${i}` }))),
    default_variation: fc.constantFrom('a', 'b', null, 'unknown'),
    off_variation: fc.constantFrom('c', null, undefined, 'unknown'),
    variation_rules: fc.oneof(
      fc.constant(null),
      fc.array(
        fc.oneof(
          fc.record({ targeting_rules: fc.oneof(arbAnyRules, fc.constantFrom(null, { logical_operator: 'AND', groups: [] })), variation: fc.constantFrom(...VARIATION_KEYS, 'unknown') }),
          fc.record({ targeting_rules: arbAnyRules, split: arbSplit }),
        ),
        { maxLength: 3 },
      ),
    ),
    variation_split: fc.oneof(fc.constant(null), arbSplit),
  }).map((typed) => ({ ...flag, ...typed })),
);
