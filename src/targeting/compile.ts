/**
 * Compiled rule sets: the semantics of evaluate.ts / operators.ts / context.ts (the interpreted reference, kept as
 * the specification and checked against this file by property tests), with the work that depends only on the rules
 * done once, when compiling:
 *
 *  - rule values parsed once: versions, dates, numbers; `in` lists (and `equals` values) turned into Sets per type
 *    of context value; regexes compiled once and held (not looked up in the LRU per call);
 *  - attribute lookups pre-split (dotted paths) and their `user.<attr>` key built once;
 *  - segment ids a rule set references collected once; a segment's rules compiled once (cached by rules object);
 *  - condition text (`explain`) rendered only when explained, then kept;
 *  - rule sets compiled with one ConditionPool (a ruleset's flags) look up each attribute and compute each repeated
 *    condition once per evaluation scope.
 *
 * Evaluating allocates nothing for conditions on strings, numbers and booleans beyond parsing a context value that
 * changed since the previous call (versions and dates are memoised per last input, so the same `app_version` read
 * by every flag of one request is parsed once), `String(n)` for a text operator on a number, and the chain of a
 * segment nested in a segment.
 *
 * Preconditions (the server and the SDK meet them): the compiled rules and a segment's rules object are not mutated
 * afterwards, contexts are JSON data (no getters), and `env.segments` answers the same id the same way during one
 * evaluation.
 */
import {
  lookupSegment,
  MAX_SEGMENT_NESTING,
  regexConditionsExceeded,
  RegexLimitError,
  renderCondition,
  SegmentError,
  type Explanation,
} from './evaluate.js';
import { compileRegex, regexSearch } from './regex.js';
import { isScalar, parseDate, toNumber } from './operators.js';
import { compareSemver, parseSemver, type SemVer } from './semver.js';
import type { EvaluationEnv } from './types.js';
import { collectSegmentIds, countRegexConditions, isRuleSetShape, MAX_REGEX_CONDITIONS } from './validate.js';

type Obj = Record<string, unknown>;
/** The context as conditions read it: a plain object, or null when it has no attributes (not an object). */
export type Ctx = Obj | null;
/**
 * The `user_id` the rules see when the context has none of its own (flags: the user id of the request, instead of
 * copying the context to add it); undefined when the context is read as it is.
 */
export type ImplicitUserId = string | undefined;

type Lookup = (ctx: Ctx, uid: ImplicitUserId) => unknown;
type ValueTest = (actual: unknown) => boolean;
type ConditionTest = (ctx: Ctx, uid: ImplicitUserId, env: EvaluationEnv, depth: number) => boolean;

interface CompiledCondition {
  /** The condition's result after its own `negate`. */
  test: ConditionTest;
  source: Obj;
  /** renderCondition(source), rendered on first explain. */
  text: string | undefined;
}

interface CompiledGroup {
  and: boolean;
  negate: boolean;
  conditions: CompiledCondition[];
}

export interface CompiledRules {
  /** isRuleSetShape(rules): anything else evaluates to false (after its segments are resolved, as the reference). */
  shape: boolean;
  and: boolean;
  negate: boolean;
  groups: CompiledGroup[];
  /** collectSegmentIds(rules): what is resolved before every evaluation. */
  segmentIds: string[];
  /** countRegexConditions(rules): own regex conditions, checked against MAX_REGEX_CONDITIONS before evaluating. */
  regexCount: number;
  /** The rules compiled: what the regex limit counts through segments (regexConditionsExceeded). */
  source: unknown;
}

export const NO_ENV: EvaluationEnv = Object.freeze({});

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

export function isRecord(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The context as conditions read it (lookupAttribute gives a non-object context no attributes). */
export function asCtx(context: unknown): Ctx {
  return isRecord(context) ? context : null;
}

// ---- attribute lookup (context.ts lookupAttribute) -------------------------------------------

function own(o: unknown, key: string): unknown {
  return isRecord(o) && hasOwn(o, key) ? o[key] : undefined;
}

const MISSING: Lookup = () => undefined;

function compileLookup(attribute: string): Lookup {
  if (attribute === '') return MISSING;
  if (attribute.includes('.')) {
    const parts = attribute.split('.');
    return (ctx) => {
      if (ctx === null) return undefined;
      if (hasOwn(ctx, attribute)) {
        const exact = ctx[attribute];
        if (exact !== undefined) return exact;
      }
      let cur: unknown = ctx;
      for (let i = 0; i < parts.length; i++) {
        cur = own(cur, parts[i]);
        if (cur === undefined) return undefined;
      }
      return cur;
    };
  }
  const dotted = `user.${attribute}`;
  const plain = (ctx: Obj): unknown => {
    if (hasOwn(ctx, attribute)) {
      const exact = ctx[attribute];
      if (exact !== undefined) return exact;
    }
    if (hasOwn(ctx, dotted)) {
      const d = ctx[dotted];
      if (d !== undefined) return d;
    }
    return own(own(ctx, 'user'), attribute);
  };
  // The implicit user id stands for a top-level `user_id` key, which only the plain attribute `user_id` reads first
  // (a dotted path through it ends at a string and finds nothing, with or without it).
  if (attribute === 'user_id') return (ctx, uid) => (uid !== undefined ? uid : ctx === null ? undefined : plain(ctx));
  return (ctx) => (ctx === null ? undefined : plain(ctx));
}

const lookupUserId = compileLookup('user_id');

// ---- operators (operators.ts applyOperator) --------------------------------------------------

/** String view of a context value for text operators (operators.ts asText / needleOf). */
function asText(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
}

/**
 * `scalarEquals(actual, v)` for some v of `values`, with the values sorted by what they can equal: a string context
 * value equals a string value, a boolean value's text, or a number value with the same numeric value; a number
 * context value equals a number value or a numeric string value; a boolean equals itself or its text.
 */
function scalarMatcher(values: readonly unknown[]): ValueTest {
  const strings = new Set<string>();
  const numbersForStrings = new Set<number>();
  const numbers = new Set<number>();
  let matchTrue = false;
  let matchFalse = false;
  for (const v of values) {
    if (!isScalar(v)) continue;
    if (typeof v === 'string') {
      strings.add(v);
      const n = toNumber(v);
      if (n !== null) numbers.add(n);
      if (v === 'true') matchTrue = true;
      if (v === 'false') matchFalse = true;
    } else if (typeof v === 'number') {
      numbers.add(v);
      numbersForStrings.add(v);
    } else {
      strings.add(String(v));
      if (v) matchTrue = true;
      else matchFalse = true;
    }
  }
  const byNumber = numbersForStrings.size > 0;
  return (a) => {
    if (typeof a === 'string') {
      if (strings.has(a)) return true;
      if (!byNumber) return false;
      const n = toNumber(a);
      return n !== null && numbersForStrings.has(n);
    }
    if (typeof a === 'number') return Number.isFinite(a) && numbers.has(a);
    if (typeof a === 'boolean') return a ? matchTrue : matchFalse;
    return false;
  };
}

let lastVersionText: string | undefined;
let lastVersion: SemVer | null = null;

/** parseSemver, remembering the last string parsed (parsed versions are never mutated). */
function contextVersion(a: unknown): SemVer | null {
  if (typeof a !== 'string') return null;
  if (a !== lastVersionText) {
    lastVersion = parseSemver(a);
    lastVersionText = a;
  }
  return lastVersion;
}

let lastDateText: string | undefined;
let lastDate: number | null = null;

/** parseDate, remembering the last string parsed. */
function contextDate(a: unknown): number | null {
  if (typeof a !== 'string') return parseDate(a);
  if (a !== lastDateText) {
    lastDate = parseDate(a);
    lastDateText = a;
  }
  return lastDate;
}

function compileContains(value: unknown, positive: boolean): ValueTest | null {
  // The reference answers "malformed" (false either way) for an array context value unless the value is a scalar,
  // and for any other context value unless it has text; a non-scalar value has neither.
  if (!isScalar(value)) return null;
  const equal = scalarMatcher([value]);
  const needle = asText(value);
  return (a) => {
    let found: boolean;
    if (Array.isArray(a)) {
      found = false;
      for (let i = 0; i < a.length; i++) {
        if (equal(a[i])) {
          found = true;
          break;
        }
      }
    } else {
      if (needle === null) return false;
      const hay = asText(a);
      found = hay !== null && hay.includes(needle);
    }
    return found === positive;
  };
}

function compileText(value: unknown, test: (hay: string, needle: string) => boolean): ValueTest | null {
  const needle = asText(value);
  if (needle === null) return null;
  return (a) => {
    const hay = asText(a);
    return hay !== null && test(hay, needle);
  };
}

function compileRegexTest(value: unknown, positive: boolean): ValueTest | null {
  const re = compileRegex(value);
  if (re === null) return null;
  return (a) => {
    const hay = asText(a);
    // Not text: no match (so not_regex holds); a search too costly or failing is "malformed" (false either way).
    if (hay === null) return !positive;
    const found = regexSearch(re, hay);
    return found !== null && found === positive;
  };
}

function compileNumeric(value: unknown, test: (a: number, b: number) => boolean): ValueTest | null {
  const b = toNumber(value);
  if (b === null) return null;
  return (a) => {
    const x = toNumber(a);
    return x !== null && test(x, b);
  };
}

function compileSemver(value: unknown, test: (c: number) => boolean): ValueTest | null {
  const b = parseSemver(value);
  if (b === null) return null;
  return (a) => {
    const x = contextVersion(a);
    return x !== null && test(compareSemver(x, b));
  };
}

function compileDate(value: unknown, test: (a: number, b: number) => boolean): ValueTest | null {
  const b = parseDate(value);
  if (b === null) return null;
  return (a) => {
    const x = contextDate(a);
    return x !== null && test(x, b);
  };
}

/** The operator on a present context value; null when it can never hold (malformed value, unknown operator). */
function compilePresent(operator: unknown, value: unknown): ValueTest | null {
  switch (operator) {
    case 'equals':
      return isScalar(value) ? scalarMatcher([value]) : null;
    case 'not_equals': {
      if (!isScalar(value)) return null;
      const equal = scalarMatcher([value]);
      return (a) => !equal(a);
    }
    case 'in':
      return Array.isArray(value) ? scalarMatcher(value) : null;
    case 'not_in': {
      if (!Array.isArray(value)) return null;
      const inList = scalarMatcher(value);
      return (a) => !inList(a);
    }
    case 'contains':
      return compileContains(value, true);
    case 'not_contains':
      return compileContains(value, false);
    case 'starts_with':
      return compileText(value, (h, n) => h.startsWith(n));
    case 'ends_with':
      return compileText(value, (h, n) => h.endsWith(n));
    case 'regex':
      return compileRegexTest(value, true);
    case 'not_regex':
      return compileRegexTest(value, false);
    case 'gt':
      return compileNumeric(value, (a, b) => a > b);
    case 'gte':
      return compileNumeric(value, (a, b) => a >= b);
    case 'lt':
      return compileNumeric(value, (a, b) => a < b);
    case 'lte':
      return compileNumeric(value, (a, b) => a <= b);
    case 'semver_eq':
      return compileSemver(value, (c) => c === 0);
    case 'semver_gt':
      return compileSemver(value, (c) => c > 0);
    case 'semver_gte':
      return compileSemver(value, (c) => c >= 0);
    case 'semver_lt':
      return compileSemver(value, (c) => c < 0);
    case 'semver_lte':
      return compileSemver(value, (c) => c <= 0);
    case 'before':
      return compileDate(value, (a, b) => a < b);
    case 'after':
      return compileDate(value, (a, b) => a > b);
    default:
      return null;
  }
}

const NO_VALUE_HOLDS: ValueTest = () => false;
const ANY_VALUE_HOLDS: ValueTest = () => true;

/**
 * applyOperator(operator, actual, value), split on whether the attribute is missing (undefined or null): `missing` is
 * the answer then (false except is_null), `present` tests any other value.
 */
interface CompiledOperator {
  missing: boolean;
  present: ValueTest;
}

function compileOperator(operator: unknown, value: unknown): CompiledOperator {
  if (operator === 'is_null') return { missing: true, present: NO_VALUE_HOLDS };
  if (operator === 'is_not_null') return { missing: false, present: ANY_VALUE_HOLDS };
  return { missing: false, present: compilePresent(operator, value) ?? NO_VALUE_HOLDS };
}

// ---- segments (evaluate.ts resolveSegments / isMember) ---------------------------------------

/** A segment's rules compiled once per rules object; null when not in the rule-set format. */
const segmentRulesCache = new WeakMap<object, CompiledRules>();

function compiledSegmentRules(rules: unknown): CompiledRules | null {
  if (typeof rules !== 'object' || rules === null) return null;
  let compiled = segmentRulesCache.get(rules);
  if (compiled === undefined) segmentRulesCache.set(rules, (compiled = compileRules(rules)));
  return compiled.shape ? compiled : null;
}

const NO_CHAIN: readonly string[] = Object.freeze([]);

/** Throws SegmentError unless every (transitively) referenced segment resolves to a usable one. */
function resolveSegments(ids: readonly string[], env: EvaluationEnv, chain: readonly string[]): void {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (chain.includes(id) || chain.length >= MAX_SEGMENT_NESTING) throw new SegmentError(id, 'recursion');
    const seg = lookupSegment(env, id);
    if (!seg) throw new SegmentError(id, 'missing');
    if (seg.kind === 'rules') {
      const rules = seg.valid === true ? compiledSegmentRules(seg.rules) : null;
      if (rules === null) throw new SegmentError(id, 'invalid');
      if (rules.segmentIds.length > 0) resolveSegments(rules.segmentIds, env, [...chain, id]);
    } else if (seg.kind !== 'id_list') {
      throw new SegmentError(id, 'invalid');
    }
  }
}

function isMember(id: string, ctx: Ctx, uid: ImplicitUserId, env: EvaluationEnv, depth: number): boolean {
  const seg = lookupSegment(env, id);
  if (!seg) throw new SegmentError(id, 'missing');
  if (seg.kind === 'id_list') {
    const userId = lookupUserId(ctx, uid);
    if (typeof userId !== 'string') return false;
    try {
      return seg.has(userId) === true;
    } catch {
      throw new SegmentError(id, 'invalid');
    }
  }
  const rules = seg.kind === 'rules' && seg.valid === true ? compiledSegmentRules(seg.rules) : null;
  if (rules === null) throw new SegmentError(id, 'invalid');
  if (depth >= MAX_SEGMENT_NESTING) throw new SegmentError(id, 'recursion');
  return evalRules(rules, ctx, uid, env, depth + 1, false, null);
}

// ---- rule sets -------------------------------------------------------------------------------

const NEVER: ConditionTest = () => false;
const ALWAYS: ConditionTest = () => true;

// ---- sharing between the rule sets of one ruleset (flags compiled together) -----------------

/**
 * Attribute lookups and identical conditions shared by every rule set compiled with the same pool: within one
 * evaluation scope (one top-level call: every flag evaluated for one user and context), each attribute is looked up
 * once and each distinct condition computed once; flags of one ruleset commonly repeat both. Results are stamped with
 * the scope they were computed in, so nothing is cleared or allocated per evaluation. Every entry point that evaluates
 * pooled conditions (compile-flag.ts) opens a scope. Segment conditions are never shared (they may throw, and depend on
 * `env`).
 */
export interface ConditionPool {
  attributes: Map<string, { lookup: Lookup; scope: number; value: unknown }>;
  conditions: Map<string, ConditionTest>;
}

export const newConditionPool = (): ConditionPool => ({ attributes: new Map(), conditions: new Map() });

/** The current evaluation scope and the last one opened. Pooled conditions are only evaluated inside a scope. */
let activeScope = 0;
let lastScope = 0;

/** Opens an evaluation scope; returns what closeScope restores (scopes nest: an env callback may evaluate too). */
export function openScope(): number {
  const outer = activeScope;
  activeScope = ++lastScope;
  return outer;
}

export function closeScope(outer: number): void {
  activeScope = outer;
}

/**
 * Data as JSON.parse makes it (finite numbers other than -0, no undefined, arrays without holes or extra properties,
 * plain objects with enumerable own string keys only, nothing with `toJSON`): JSON.stringify tells such values apart.
 */
function isPlainJson(v: unknown, depth = 0): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0);
  if (typeof v !== 'object' || depth > 32 || 'toJSON' in v) return false;
  const keys = Reflect.ownKeys(v);
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype || keys.length !== v.length + 1) return false;
    for (let i = 0; i < v.length; i++) if (!Object.prototype.hasOwnProperty.call(v, i) || !isPlainJson(v[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(v);
  if ((proto !== Object.prototype && proto !== null) || Object.keys(v).length !== keys.length) return false;
  for (const k of keys) {
    const d = Object.getOwnPropertyDescriptor(v, k)!;
    if (!('value' in d) || !isPlainJson(d.value, depth + 1)) return false;
  }
  return true;
}

/** Identity of a condition's meaning; null when its value cannot be compared safely (then it is not shared). */
function conditionKey(attribute: string, operator: unknown, value: unknown, negate: boolean): string | null {
  if (value !== undefined && !isPlainJson(value)) return null;
  const head = JSON.stringify([attribute, operator, negate]);
  return value === undefined ? `${head}~` : `${head}${JSON.stringify(value)}`;
}

function pooledLookup(pool: ConditionPool, attribute: string): Lookup {
  let cell = pool.attributes.get(attribute);
  if (cell === undefined) pool.attributes.set(attribute, (cell = { lookup: compileLookup(attribute), scope: 0, value: undefined }));
  const c = cell;
  return (ctx, uid) => {
    if (c.scope !== activeScope) {
      c.value = c.lookup(ctx, uid);
      c.scope = activeScope;
    }
    return c.value;
  };
}

function compileValueCondition(attribute: string, operator: unknown, value: unknown, negate: boolean, pool: ConditionPool | null): ConditionTest {
  const lookup = pool === null ? compileLookup(attribute) : pooledLookup(pool, attribute);
  const { missing, present } = compileOperator(operator, value);
  // The condition's result after its own `negate` (`!==` flips a boolean when negated).
  const test: ConditionTest = (ctx, uid) => {
    const a = lookup(ctx, uid);
    return (a === undefined || a === null ? missing : present(a)) !== negate;
  };
  if (pool === null) return test;
  const key = conditionKey(attribute, operator, value, negate);
  if (key === null) return test;
  const shared = pool.conditions.get(key);
  if (shared !== undefined) return shared;
  let scope = 0;
  let result = false;
  const memo: ConditionTest = (ctx, uid) => {
    if (scope !== activeScope) {
      const a = lookup(ctx, uid);
      result = (a === undefined || a === null ? missing : present(a)) !== negate;
      scope = activeScope;
    }
    return result;
  };
  pool.conditions.set(key, memo);
  return memo;
}

function compileCondition(c: Obj, pool: ConditionPool | null): CompiledCondition {
  const negate = c.negate === true;
  const operator = c.operator;
  const value = c.value;
  let test: ConditionTest;
  if (operator === 'in_segment' || operator === 'not_in_segment') {
    if (typeof value !== 'string' || value === '') test = negate ? ALWAYS : NEVER;
    else {
      const expected = (operator === 'in_segment') !== negate;
      test = (ctx, uid, env, depth) => isMember(value, ctx, uid, env, depth) === expected;
    }
  } else {
    test = compileValueCondition(c.attribute as string, operator, value, negate, pool);
  }
  return { test, source: c, text: undefined };
}

/** Compiles a rule set; conditions are shared with the other rule sets compiled with the same `pool`. */
export function compileRules(rules: unknown, pool: ConditionPool | null = null): CompiledRules {
  const segmentIds = collectSegmentIds(rules);
  if (!isRuleSetShape(rules)) return { shape: false, and: false, negate: false, groups: [], segmentIds, regexCount: 0, source: rules };
  return {
    shape: true,
    regexCount: countRegexConditions(rules),
    source: rules,
    and: rules.logical_operator === 'AND',
    negate: rules.negate === true,
    groups: rules.groups.map((g) => ({
      and: g.logical_operator === 'AND',
      negate: g.negate === true,
      conditions: g.conditions.map((c) => compileCondition(c as unknown as Obj, pool)),
    })),
    segmentIds,
  };
}

/**
 * AND / OR at both levels; an empty rule set or group holds. Short-circuits unless `exhaustive` (explain lists every
 * satisfied condition, into `trace`, in document order; conditions inside segments are never listed).
 */
function evalRules(
  rules: CompiledRules,
  ctx: Ctx,
  uid: ImplicitUserId,
  env: EvaluationEnv,
  depth: number,
  exhaustive: boolean,
  trace: string[] | null,
): boolean {
  if (!rules.shape) return false;
  const groups = rules.groups;
  const and = rules.and;
  let acc = and || groups.length === 0;
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i];
    const conditions = g.conditions;
    const gAnd = g.and;
    let gAcc = gAnd || conditions.length === 0;
    for (let j = 0; j < conditions.length; j++) {
      const c = conditions[j];
      const r = c.test(ctx, uid, env, depth);
      if (r && trace !== null) trace.push(c.text ?? (c.text = renderCondition(c.source)));
      gAcc = j === 0 ? r : gAnd ? gAcc && r : gAcc || r;
      if (!exhaustive && (gAnd ? !gAcc : gAcc)) break;
    }
    const gr = g.negate ? !gAcc : gAcc;
    acc = i === 0 ? gr : and ? acc && gr : acc || gr;
    if (!exhaustive && (and ? !acc : acc)) break;
  }
  return rules.negate ? !acc : acc;
}

/**
 * Resolves the segments, checks the regex limit, then evaluates (evaluateRuleSet / explainRuleSet with `trace`).
 * Throws only SegmentError and RegexLimitError.
 */
export function runRules(
  rules: CompiledRules,
  ctx: Ctx,
  uid: ImplicitUserId,
  env: EvaluationEnv,
  exhaustive: boolean,
  trace: string[] | null,
): boolean {
  if (rules.segmentIds.length > 0) {
    resolveSegments(rules.segmentIds, env, NO_CHAIN);
    if (regexConditionsExceeded(rules.source, env)) throw new RegexLimitError();
  } else if (rules.regexCount > MAX_REGEX_CONDITIONS) {
    throw new RegexLimitError();
  }
  return evalRules(rules, ctx, uid, env, 0, exhaustive, trace);
}

/** A rule set without segments, evaluated with short-circuits: what evalRules answers, with less to decide per call. */
export type SegmentFreeMatcher = (ctx: Ctx, uid: ImplicitUserId) => boolean;

type GroupTest = (ctx: Ctx, uid: ImplicitUserId) => boolean;

/** AND / OR over `tests`, then `negate`; an empty list holds (as evalRules). */
function combine(tests: GroupTest[], and: boolean, negate: boolean): GroupTest {
  const n = tests.length;
  if (n === 0) return negate ? () => false : () => true;
  if (n === 1 && !negate) return tests[0];
  if (and) {
    return (ctx, uid) => {
      for (let i = 0; i < n; i++) if (!tests[i](ctx, uid)) return negate;
      return !negate;
    };
  }
  return (ctx, uid) => {
    for (let i = 0; i < n; i++) if (tests[i](ctx, uid)) return !negate;
    return negate;
  };
}

/**
 * evalRules(rules, ctx, uid, NO_ENV, 0, false, null) for a rule set naming no segment (its conditions then read
 * neither `env` nor `depth`, and never throw); null when it names one, or has more regex conditions than allowed
 * (runRules throws RegexLimitError for it).
 */
export function segmentFreeMatcher(rules: CompiledRules): SegmentFreeMatcher | null {
  if (rules.segmentIds.length > 0 || rules.regexCount > MAX_REGEX_CONDITIONS) return null;
  if (!rules.shape) return () => false;
  // Without segments every condition is a value condition or a constant (an unusable in_segment), neither of which
  // reads `env` or `depth`: called without them.
  const groups = rules.groups.map((g) => combine(g.conditions.map((c) => c.test as unknown as GroupTest), g.and, g.negate));
  return combine(groups, rules.and, rules.negate);
}

export interface RuleSetEvaluator {
  /** evaluateRuleSet(rules, context, env). */
  evaluate(context: unknown, env?: EvaluationEnv): boolean;
  /** explainRuleSet(rules, context, env): evaluates every condition and lists the satisfied ones. */
  explain(context: unknown, env?: EvaluationEnv): Explanation;
}

/** Compiles a rule set once; the rules must not be mutated afterwards. */
export function compileRuleSet(rules: unknown): RuleSetEvaluator {
  const compiled = compileRules(rules);
  return {
    evaluate: (context, env = NO_ENV) => runRules(compiled, asCtx(context), undefined, env, false, null),
    explain: (context, env = NO_ENV) => {
      const matchedConditions: string[] = [];
      const matched = runRules(compiled, asCtx(context), undefined, env, true, matchedConditions);
      return { matched, matchedConditions };
    },
  };
}

const ruleSetCache = new WeakMap<object, RuleSetEvaluator>();

/**
 * compileRuleSet, kept per rules object (weakly): what the server evaluates rule sets with outside flags (experiment
 * targeting, segment membership and preview), so a rule set read once (a cached experiment, a segment row) is
 * compiled once. The rules must not be mutated afterwards.
 */
export function ruleSetEvaluator(rules: unknown): RuleSetEvaluator {
  if (typeof rules !== 'object' || rules === null) return compileRuleSet(rules);
  let evaluator = ruleSetCache.get(rules);
  if (evaluator === undefined) ruleSetCache.set(rules, (evaluator = compileRuleSet(rules)));
  return evaluator;
}
