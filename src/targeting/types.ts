/**
 * Targeting rule types. Pure data, no runtime dependencies (bundled into the SDK).
 *
 * Rule format (see README.md):
 *
 *   { logical_operator: 'AND' | 'OR', negate?: boolean,
 *     groups: [ { logical_operator: 'AND' | 'OR', negate?: boolean,
 *                 conditions: [ { attribute, operator, value?, negate?: boolean } ] } ] }
 *
 * `negate: true` may appear on the rule set, on a group and on a condition; it inverts the
 * boolean result of that node after the node has been evaluated (a missing attribute makes the
 * condition false, so `negate` on it makes it true).
 */

export type LogicalOperator = 'AND' | 'OR';

/** Every operator a rule set for a flag or experiment may use, in documentation order. */
export const OPERATORS = [
  'equals',
  'not_equals',
  'in',
  'not_in',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'regex',
  'not_regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'semver_eq',
  'semver_gt',
  'semver_gte',
  'semver_lt',
  'semver_lte',
  'is_null',
  'is_not_null',
  'in_segment',
  'not_in_segment',
  'before',
  'after',
] as const;

export type Operator = (typeof OPERATORS)[number];

/** Operators that reference a segment (attribute `segment`, value = segment id). */
export const SEGMENT_OPERATORS = ['in_segment', 'not_in_segment'] as const;

/** Operators whose value is a regular expression (counted by the segment regex limit). */
export const REGEX_OPERATORS = ['regex', 'not_regex'] as const;

/** Operators whose value is a list (counted by the segment list-value limit). */
export const LIST_OPERATORS = ['in', 'not_in'] as const;

const OPERATOR_SET: ReadonlySet<string> = new Set(OPERATORS);

export function isOperator(op: unknown): op is Operator {
  return typeof op === 'string' && OPERATOR_SET.has(op);
}

export function isSegmentOperator(op: unknown): op is 'in_segment' | 'not_in_segment' {
  return op === 'in_segment' || op === 'not_in_segment';
}

export interface Condition {
  attribute: string;
  operator: Operator;
  value?: unknown;
  negate?: boolean;
}

export interface ConditionGroup {
  logical_operator: LogicalOperator;
  conditions: Condition[];
  negate?: boolean;
}

export interface RuleSet {
  logical_operator: LogicalOperator;
  groups: ConditionGroup[];
  negate?: boolean;
}

/** A segment made ready for evaluation by the caller (server or SDK). */
export type CompiledSegment =
  | { kind: 'rules'; rules: unknown; valid: boolean }
  | { kind: 'id_list'; has(userId: string): boolean };

export interface EvaluationEnv {
  /** Resolves a segment id; `undefined` means the segment does not exist. */
  segments?: (id: string) => CompiledSegment | undefined;
}

/** The context a rule set is evaluated against (any JSON object; non-objects have no attributes). */
export type TargetingContext = Record<string, unknown>;
