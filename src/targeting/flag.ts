/**
 * Feature flag evaluation.
 *
 * Decision table (first matching row wins):
 *
 *  | # | flag state                          | targeting rules            | rollout bucket  | result                                              |
 *  |---|-------------------------------------|----------------------------|-----------------|-----------------------------------------------------|
 *  | 1 | is_active !== true                  | —                          | —               | { enabled: false, reason: 'disabled' }              |
 *  | 2 | status === 'archived'               | —                          | —               | { enabled: false, reason: 'disabled' }              |
 *  | 3 | active                              | segment error              | —               | { enabled: false, reason: 'error' }                 |
 *  | 4 | active                              | present, not matched       | —               | { enabled: false, reason: 'targeting_miss' }        |
 *  | 5 | active                              | present, matched           | miss            | { enabled: false, reason: 'rollout', rule }         |
 *  | 6 | active                              | present, matched           | hit             | { enabled: true,  reason: 'targeting_match', rule } |
 *  | 7 | active                              | absent                     | miss            | { enabled: false, reason: 'rollout' }               |
 *  | 8 | active                              | absent                     | hit             | { enabled: true,  reason: 'rollout' }               |
 *
 *  - "absent": targeting_rules is null/undefined, or a rule set with no groups.
 *  - "present" also covers stored rules in an unrecognised (old) format: they are not evaluated
 *    and count as not matched (row 4) — fail closed rather than expose the flag to everyone.
 *  - Rollout: bucketFor(`flag:<key>`, userId) < round(rollout_percentage * 100);
 *    rollout_percentage null/undefined means 100; other non-finite values mean 0.
 *  - `rule` lists the satisfied conditions (explainRuleSet), at most 10, joined with ", "
 *    (followed by ", …" when there are more); omitted when none is satisfied (e.g. a negated rule set).
 *  - The rules see the context with `user_id` set to userId when the context has no own `user_id`.
 *  - Context limits (checkTargetingContext) are the caller's job, before calling this.
 */
import { explainRuleSet } from './evaluate.js';
import { flagSalt, inRollout } from './hash.js';
import type { EvaluationEnv } from './types.js';
import { isRuleSetShape } from './validate.js';

export interface FlagDefinition {
  key: string;
  is_active: boolean;
  status?: string | null;
  rollout_percentage?: number | null;
  targeting_rules?: unknown;
}

export type FlagReason = 'disabled' | 'targeting_match' | 'targeting_miss' | 'rollout' | 'error';

export interface FlagEvaluation {
  enabled: boolean;
  reason: FlagReason;
  rule?: string;
}

const MAX_RULE_PARTS = 10;

/** True when the flag has targeting rules that must be satisfied (see table). */
export function hasTargetingRules(rules: unknown): boolean {
  if (rules === null || rules === undefined) return false;
  if (isRuleSetShape(rules)) return rules.groups.length > 0;
  return true;
}

/** The `rule` text: the first MAX_RULE_PARTS satisfied conditions, ", …" when there are more. */
export function describeRule(conditions: string[]): string {
  const parts = conditions.slice(0, MAX_RULE_PARTS);
  return conditions.length > MAX_RULE_PARTS ? `${parts.join(', ')}, …` : parts.join(', ');
}

function withUserId(context: unknown, userId: string): Record<string, unknown> {
  const ctx = typeof context === 'object' && context !== null && !Array.isArray(context) ? (context as Record<string, unknown>) : {};
  if (Object.prototype.hasOwnProperty.call(ctx, 'user_id') || typeof userId !== 'string') return ctx;
  return { ...ctx, user_id: userId };
}

export function evaluateFlag(
  flag: FlagDefinition,
  userId: string,
  context: unknown,
  env: EvaluationEnv = {},
): FlagEvaluation {
  try {
    if (flag.is_active !== true || flag.status === 'archived') return { enabled: false, reason: 'disabled' };
    const pct = flag.rollout_percentage === null || flag.rollout_percentage === undefined ? 100 : flag.rollout_percentage;
    const rolledIn = inRollout(flagSalt(flag.key), String(userId), pct);
    const rules = flag.targeting_rules;
    if (!hasTargetingRules(rules)) return { enabled: rolledIn, reason: 'rollout' };
    if (!isRuleSetShape(rules)) return { enabled: false, reason: 'targeting_miss' };
    const { matched, matchedConditions } = explainRuleSet(rules, withUserId(context, userId), env);
    if (!matched) return { enabled: false, reason: 'targeting_miss' };
    const extra = matchedConditions.length > 0 ? { rule: describeRule(matchedConditions) } : {};
    return rolledIn ? { enabled: true, reason: 'targeting_match', ...extra } : { enabled: false, reason: 'rollout', ...extra };
  } catch {
    // SegmentError (missing / invalid segment), RegexLimitError — and, defensively, anything else.
    return { enabled: false, reason: 'error' };
  }
}
