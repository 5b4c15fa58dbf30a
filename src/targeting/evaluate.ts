/**
 * Rule-set evaluation.
 *
 *  - Rule set: its groups combined with its logical_operator; a group: its conditions combined
 *    with the group's logical_operator. An empty rule set / group holds (imposes no restriction).
 *  - `negate: true` on a rule set, group or condition inverts that node's result.
 *  - A value that is not a recognisable rule set (see isRuleSetShape) evaluates to false.
 *  - Conditions use lookupAttribute (context.ts) and applyOperator (operators.ts); they never throw.
 *  - Segments: `in_segment` / `not_in_segment` with the segment id as `value` (attribute is
 *    conventionally `segment` and is not read). Before evaluating, every segment the rule set
 *    references (transitively) is resolved through `env.segments`; if one is missing, has
 *    invalid rules, or segments nest deeper than MAX_SEGMENT_NESTING / form a cycle,
 *    evaluation throws a SegmentError — regardless of short-circuiting, so the outcome never
 *    depends on condition order.
 *  - Then, if the rule set reaches more than MAX_REGEX_CONDITIONS regex conditions (its own, plus
 *    those of the segments it names each time it names them: what evaluation may run), it throws a
 *    RegexLimitError, again before evaluating anything. Validation refuses such rules; this is
 *    for rules stored before the limit, or a segment edited after a flag named it.
 *    SegmentError and RegexLimitError are the only errors these functions throw.
 *  - id_list segments test the context's `user_id` (looked up like any attribute; must be a
 *    string, otherwise the user is not a member). rules segments evaluate their rules against
 *    the same context.
 */
import { lookupAttribute } from './context.js';
import { applyOperator } from './operators.js';
import type { CompiledSegment, EvaluationEnv } from './types.js';
import { collectSegmentIds, countRegexConditions, isRuleSetShape, MAX_REGEX_CONDITIONS } from './validate.js';

/** How many segments may nest inside one another (segment rules normally cannot reference any). */
export const MAX_SEGMENT_NESTING = 4;

export type SegmentProblem = 'missing' | 'invalid' | 'recursion';

export class SegmentError extends Error {
  readonly segmentId: string;
  readonly problem: SegmentProblem;
  constructor(segmentId: string, problem: SegmentProblem) {
    super(
      problem === 'missing'
        ? 'Targeting rules reference a segment that does not exist'
        : problem === 'invalid'
          ? 'Targeting rules reference a segment whose rules are invalid'
          : 'Targeting rules reference segments nested too deeply or in a cycle',
    );
    this.name = 'SegmentError';
    this.segmentId = segmentId;
    this.problem = problem;
  }
}

export class RegexLimitError extends Error {
  constructor() {
    super(`Targeting rules reach more than ${MAX_REGEX_CONDITIONS} regex conditions`);
    this.name = 'RegexLimitError';
  }
}

/**
 * Whether evaluating `rules` may run more than MAX_REGEX_CONDITIONS regex conditions: its own, plus, for each
 * condition naming a rules segment, that segment's (recursively, nesting as resolveSegments allows). Stops counting
 * past the limit. Call after resolveSegments, which has refused cycles.
 */
export function regexConditionsExceeded(rules: unknown, env: EvaluationEnv): boolean {
  return regexConditionsReached(rules, env, 0, new Map()) > MAX_REGEX_CONDITIONS;
}

function regexConditionsReached(rules: unknown, env: EvaluationEnv, depth: number, bySegment: Map<string, number>): number {
  if (!isRuleSetShape(rules)) return 0;
  let n = countRegexConditions(rules);
  for (const g of rules.groups) {
    for (const c of g.conditions) {
      if (n > MAX_REGEX_CONDITIONS) return n;
      if ((c.operator === 'in_segment' || c.operator === 'not_in_segment') && typeof c.value === 'string' && c.value !== '') {
        n += segmentRegexConditions(c.value, env, depth, bySegment);
      }
    }
  }
  return n;
}

function segmentRegexConditions(id: string, env: EvaluationEnv, depth: number, bySegment: Map<string, number>): number {
  let n = bySegment.get(id);
  if (n === undefined) {
    const seg = lookupSegment(env, id);
    bySegment.set(id, 0);
    n = seg?.kind === 'rules' && depth < MAX_SEGMENT_NESTING ? regexConditionsReached(seg.rules, env, depth + 1, bySegment) : 0;
    bySegment.set(id, n);
  }
  return n;
}

export interface Explanation {
  matched: boolean;
  /** Every condition that held (after its own `negate`), rendered `<attribute> <operator> <value>`. */
  matchedConditions: string[];
}

type Obj = Record<string, unknown>;

export function lookupSegment(env: EvaluationEnv, id: string): CompiledSegment | undefined {
  try {
    return env.segments?.(id) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Throws SegmentError unless every (transitively) referenced segment resolves to a usable one. */
function resolveSegments(rules: unknown, env: EvaluationEnv, chain: string[]): void {
  for (const id of collectSegmentIds(rules)) {
    if (chain.includes(id) || chain.length >= MAX_SEGMENT_NESTING) throw new SegmentError(id, 'recursion');
    const seg = lookupSegment(env, id);
    if (!seg) throw new SegmentError(id, 'missing');
    if (seg.kind === 'rules') {
      if (seg.valid !== true || !isRuleSetShape(seg.rules)) throw new SegmentError(id, 'invalid');
      resolveSegments(seg.rules, env, [...chain, id]);
    } else if (seg.kind !== 'id_list') {
      throw new SegmentError(id, 'invalid');
    }
  }
}

/** Renders a rule value: strings, numbers, booleans plain; arrays / objects / null as JSON. */
export function renderValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** `<attribute> <operator> <value>` (value omitted when absent), prefixed `NOT ` when negated. */
export function renderCondition(c: { attribute?: unknown; operator?: unknown; value?: unknown; negate?: unknown }): string {
  const head = `${String(c.attribute)} ${String(c.operator)}`;
  const text = c.value === undefined ? head : `${head} ${renderValue(c.value)}`;
  return c.negate === true ? `NOT ${text}` : text;
}

function isMember(id: string, ctx: unknown, env: EvaluationEnv, depth: number): boolean {
  const seg = lookupSegment(env, id);
  if (!seg) throw new SegmentError(id, 'missing');
  if (seg.kind === 'id_list') {
    const userId = lookupAttribute(ctx, 'user_id');
    if (typeof userId !== 'string') return false;
    try {
      return seg.has(userId) === true;
    } catch {
      throw new SegmentError(id, 'invalid');
    }
  }
  if (seg.kind !== 'rules' || seg.valid !== true || !isRuleSetShape(seg.rules)) throw new SegmentError(id, 'invalid');
  if (depth >= MAX_SEGMENT_NESTING) throw new SegmentError(id, 'recursion');
  return evalRules(seg.rules, ctx, env, depth + 1, null);
}

function evalCondition(c: Obj, ctx: unknown, env: EvaluationEnv, depth: number, trace: string[] | null): boolean {
  let result: boolean;
  if (c.operator === 'in_segment' || c.operator === 'not_in_segment') {
    if (typeof c.value !== 'string' || c.value === '') result = false;
    else {
      const member = isMember(c.value, ctx, env, depth);
      result = c.operator === 'in_segment' ? member : !member;
    }
  } else {
    result = applyOperator(c.operator, lookupAttribute(ctx, c.attribute as string), c.value);
  }
  if (c.negate === true) result = !result;
  if (result && trace) trace.push(renderCondition(c));
  return result;
}

/** AND / OR over items; short-circuits unless tracing (explain lists every satisfied condition). */
function combine<T>(op: unknown, items: T[], test: (item: T) => boolean, exhaustive: boolean): boolean {
  const isAnd = op === 'AND';
  let acc = isAnd || items.length === 0;
  let first = true;
  for (const item of items) {
    const r = test(item);
    acc = first ? r : isAnd ? acc && r : acc || r;
    first = false;
    if (!exhaustive && (isAnd ? !acc : acc)) break;
  }
  return acc;
}

function evalRules(rules: unknown, ctx: unknown, env: EvaluationEnv, depth: number, trace: string[] | null): boolean {
  if (!isRuleSetShape(rules)) return false;
  const exhaustive = trace !== null;
  const r = combine(
    rules.logical_operator,
    rules.groups,
    (g) => {
      const gr = combine(g.logical_operator, g.conditions, (c) => evalCondition(c as unknown as Obj, ctx, env, depth, trace), exhaustive);
      return g.negate === true ? !gr : gr;
    },
    exhaustive,
  );
  return rules.negate === true ? !r : r;
}

/** Throws SegmentError or RegexLimitError when the rules cannot be evaluated (see file comment). */
function checkEvaluable(rules: unknown, env: EvaluationEnv): void {
  resolveSegments(rules, env, []);
  if (regexConditionsExceeded(rules, env)) throw new RegexLimitError();
}

/**
 * Evaluates a rule set against a context. Never throws except SegmentError and RegexLimitError (see file comment).
 */
export function evaluateRuleSet(rules: unknown, context: unknown, env: EvaluationEnv = {}): boolean {
  checkEvaluable(rules, env);
  return evalRules(rules, context, env, 0, null);
}

/**
 * Like evaluateRuleSet, and lists every satisfied condition (all conditions are evaluated,
 * in document order; conditions inside referenced segments are not listed).
 */
export function explainRuleSet(rules: unknown, context: unknown, env: EvaluationEnv = {}): Explanation {
  checkEvaluable(rules, env);
  const trace: string[] = [];
  const matched = evalRules(rules, context, env, 0, trace);
  return { matched, matchedConditions: trace };
}
