/**
 * Rule-set validation. Pure; each validator returns the first problem as a fixed message
 * (never echoing submitted values) or null when the rules are acceptable.
 */
import { isValidOperatorValue } from './operators.js';
import { MAX_REGEX_PROGRAM_SIZE, regexProblem } from './regex.js';
import { isOperator, isSegmentOperator, type RuleSet } from './types.js';

/** Flag / experiment rules: groups + conditions counted together. */
export const MAX_RULE_NODES = 1000;
/** Flag / experiment rules: distinct segment ids referenced. */
export const MAX_SEGMENTS_PER_RULESET = 10;
export const MAX_ATTRIBUTE_LENGTH = 256;
/**
 * Regex conditions one evaluation may run: a flag's or experiment's own, plus those of the segments it names (each
 * time a condition names one, as evaluation runs them). With MAX_REGEX_TEST_COST per search this bounds the regex
 * work of one evaluation to 80,000 units (issue #27; regex.ts).
 */
export const MAX_REGEX_CONDITIONS = 10;

/** Segment rules limits. */
export const MAX_SEGMENT_GROUPS = 20;
export const MAX_SEGMENT_CONDITIONS = 50;
export const MAX_SEGMENT_REGEX_CONDITIONS = MAX_REGEX_CONDITIONS;
export const MAX_SEGMENT_LIST_VALUES = 1000;

export const RULE_MESSAGES = {
  notObject: 'targeting rules: must be an object with logical_operator and groups',
  logicalOperator: 'targeting rules: logical_operator must be AND or OR',
  negate: 'targeting rules: negate must be a boolean',
  groups: 'targeting rules: groups must be an array',
  group: 'targeting rules: each group must be an object with logical_operator and a conditions array',
  condition: 'targeting rules: each condition must be an object with attribute and operator',
  attribute: 'targeting rules: attribute must be a non-empty string of at most 256 characters',
  unknownOperator: 'targeting rules: unknown operator',
  value: 'targeting rules: a condition value does not suit its operator',
  tooManyNodes: 'targeting rules: at most 1000 groups and conditions are allowed',
  tooManySegments: 'targeting rules: at most 10 distinct segments are allowed',
  regexTooLarge: `targeting rules: a regex pattern may compile to at most ${MAX_REGEX_PROGRAM_SIZE} instructions`,
  tooManyRegex: `targeting rules: at most ${MAX_REGEX_CONDITIONS} regex conditions are allowed, counting those of the segments named`,
} as const;

export const SEGMENT_RULE_MESSAGES = {
  notObject: 'Segment rules must be an object with logical_operator and groups',
  logicalOperator: 'Segment rules logical_operator must be AND or OR',
  negate: 'Segment rules negate must be a boolean',
  groups: 'Segment rules groups must be an array',
  noGroups: 'Segment rules must have at least one group',
  tooManyGroups: 'Segment rules may have at most 20 groups',
  group: 'Segment rules groups must be objects with logical_operator and a conditions array',
  emptyGroup: 'Segment rules groups must each have at least one condition',
  tooManyConditions: 'Segment rules may have at most 50 conditions',
  condition: 'Segment rules conditions must be objects with attribute and operator',
  attribute: 'Segment rules attributes must be non-empty strings of at most 256 characters',
  unknownOperator: 'Segment rules use an unknown operator',
  segmentOperator: 'Segment rules cannot use in_segment or not_in_segment',
  value: 'Segment rules have a condition value that does not suit its operator',
  tooManyRegex: 'Segment rules may have at most 10 regex conditions',
  tooManyListValues: 'Segment rules may have at most 1000 list values in total',
  regexTooLarge: `Segment rules have a regex pattern that compiles to more than ${MAX_REGEX_PROGRAM_SIZE} instructions`,
} as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isLogical = (v: unknown): boolean => v === 'AND' || v === 'OR';
const negateOk = (o: Obj): boolean => o.negate === undefined || typeof o.negate === 'boolean';

/**
 * Is a stored rule object in the current format at all? (Structure only: rule set, groups and
 * conditions with string attribute/operator. Values and operator names are not checked.)
 * Old-format rules are kept in storage but never evaluated.
 */
export function isRuleSetShape(rules: unknown): rules is RuleSet {
  if (!isObj(rules) || !isLogical(rules.logical_operator) || !Array.isArray(rules.groups)) return false;
  for (const g of rules.groups) {
    if (!isObj(g) || !isLogical(g.logical_operator) || !Array.isArray(g.conditions)) return false;
    for (const c of g.conditions) {
      if (!isObj(c) || typeof c.attribute !== 'string' || typeof c.operator !== 'string') return false;
    }
  }
  return true;
}

/** Distinct segment ids referenced by in_segment / not_in_segment, in first-seen order. Tolerates any input. */
export function collectSegmentIds(rules: unknown): string[] {
  const ids = new Set<string>();
  if (!isObj(rules) || !Array.isArray(rules.groups)) return [];
  for (const g of rules.groups) {
    if (!isObj(g) || !Array.isArray(g.conditions)) continue;
    for (const c of g.conditions) {
      if (isObj(c) && isSegmentOperator(c.operator) && typeof c.value === 'string' && c.value !== '') ids.add(c.value);
    }
  }
  return [...ids];
}

type Messages = { [K in keyof typeof RULE_MESSAGES | keyof typeof SEGMENT_RULE_MESSAGES]?: string };

/** Checks rule-set level fields; returns the groups array or a message. */
function checkTop(rules: unknown, m: Messages): unknown[] | string {
  if (!isObj(rules)) return m.notObject!;
  if (!isLogical(rules.logical_operator)) return m.logicalOperator!;
  if (!negateOk(rules)) return m.negate!;
  if (!Array.isArray(rules.groups)) return m.groups!;
  return rules.groups;
}

function checkGroup(g: unknown, m: Messages): Obj | string {
  if (!isObj(g) || !isLogical(g.logical_operator) || !Array.isArray(g.conditions)) return m.group!;
  if (!negateOk(g)) return m.negate!;
  return g;
}

/** Condition shape + operator + value; `null` when fine. */
function checkCondition(c: unknown, m: Messages, allowSegments: boolean): string | null {
  if (!isObj(c) || !('attribute' in c) || !('operator' in c)) return m.condition!;
  if (typeof c.attribute !== 'string' || c.attribute === '' || c.attribute.length > MAX_ATTRIBUTE_LENGTH) {
    return m.attribute!;
  }
  if (!negateOk(c)) return m.negate!;
  if (!isOperator(c.operator)) return m.unknownOperator!;
  if (!allowSegments && isSegmentOperator(c.operator)) return m.segmentOperator!;
  if (isRegexOperator(c.operator) && regexProblem(c.value) === 'too_large') return m.regexTooLarge!;
  if (!isValidOperatorValue(c.operator, c.value)) return m.value!;
  return null;
}

const isRegexOperator = (op: unknown): boolean => op === 'regex' || op === 'not_regex';

/** Regex conditions of a rule set in the current format, its segments' not counted; 0 for anything else. */
export function countRegexConditions(rules: unknown): number {
  if (!isRuleSetShape(rules)) return 0;
  let n = 0;
  for (const g of rules.groups) for (const c of g.conditions) if (isRegexOperator(c.operator)) n += 1;
  return n;
}

/**
 * Validates flag / experiment targeting rules. Order: rule-set fields, groups (shape and the
 * 1000 groups+conditions limit), regex conditions ≤ 10 (the segments' are counted by the caller, who has them:
 * regexConditionsExceeded), conditions (shape, operator, value, regex program size), distinct segments ≤ 10.
 */
export function validateRuleSet(rules: unknown): string | null {
  const m = RULE_MESSAGES;
  const groups = checkTop(rules, m);
  if (typeof groups === 'string') return groups;
  if (groups.length > MAX_RULE_NODES) return m.tooManyNodes;
  const checked: Obj[] = [];
  let nodes = 0;
  for (const raw of groups) {
    const g = checkGroup(raw, m);
    if (typeof g === 'string') return g;
    nodes += 1 + (g.conditions as unknown[]).length;
    if (nodes > MAX_RULE_NODES) return m.tooManyNodes;
    checked.push(g);
  }
  // Counted before the conditions are checked: checking a regex compiles it, and refusing 1,000 of them should not
  // compile them first.
  let regexes = 0;
  for (const g of checked) for (const c of g.conditions as unknown[]) if (isObj(c) && isRegexOperator(c.operator)) regexes += 1;
  if (regexes > MAX_REGEX_CONDITIONS) return m.tooManyRegex;
  const segments = new Set<string>();
  for (const g of checked) {
    for (const c of g.conditions as unknown[]) {
      const problem = checkCondition(c, m, true);
      if (problem) return problem;
      const cond = c as Obj;
      if (isSegmentOperator(cond.operator)) {
        segments.add(cond.value as string);
        if (segments.size > MAX_SEGMENTS_PER_RULESET) return m.tooManySegments;
      }
    }
  }
  return null;
}

/**
 * Validates a segment's own rules. Order: rule-set fields, group count (1..20), each group
 * (shape, ≥ 1 condition), total conditions ≤ 50, conditions (shape, operator — no segment
 * operators —, value), regex conditions ≤ 10, list values ≤ 1000.
 */
export function validateSegmentRules(rules: unknown): string | null {
  const m = SEGMENT_RULE_MESSAGES;
  const groups = checkTop(rules, m);
  if (typeof groups === 'string') return groups;
  if (groups.length === 0) return m.noGroups;
  if (groups.length > MAX_SEGMENT_GROUPS) return m.tooManyGroups;
  const checked: Obj[] = [];
  let conditions = 0;
  for (const raw of groups) {
    const g = checkGroup(raw, m);
    if (typeof g === 'string') return g;
    const n = (g.conditions as unknown[]).length;
    if (n === 0) return m.emptyGroup;
    conditions += n;
    if (conditions > MAX_SEGMENT_CONDITIONS) return m.tooManyConditions;
    checked.push(g);
  }
  let regexes = 0;
  let listValues = 0;
  for (const g of checked) {
    for (const c of g.conditions as unknown[]) {
      const problem = checkCondition(c, m, false);
      if (problem) return problem;
      const cond = c as Obj;
      if (isRegexOperator(cond.operator)) {
        if (++regexes > MAX_SEGMENT_REGEX_CONDITIONS) return m.tooManyRegex;
      }
      if (cond.operator === 'in' || cond.operator === 'not_in') {
        listValues += (cond.value as unknown[]).length;
        if (listValues > MAX_SEGMENT_LIST_VALUES) return m.tooManyListValues;
      }
    }
  }
  return null;
}
