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
import { evaluateRuleSet, explainRuleSet } from './evaluate.js';
import { flagSalt, inRollout } from './hash.js';
import type { EvaluationEnv } from './types.js';
import { isRuleSetShape } from './validate.js';
import {
  isTypedFlag,
  pickSplit,
  splitBucket,
  type FlagValueType,
  type FlagVariation,
  type SplitEntry,
  type VariationReason,
  type VariationRule,
} from './variations.js';

export interface FlagDefinition {
  key: string;
  is_active: boolean;
  status?: string | null;
  rollout_percentage?: number | null;
  targeting_rules?: unknown;
  /** Typed flags (variations.ts); absent or `boolean`: a boolean flag, evaluated by the table above alone. */
  value_type?: FlagValueType | null;
  variations?: FlagVariation[] | null;
  default_variation?: string | null;
  off_variation?: string | null;
  variation_rules?: VariationRule[] | null;
  variation_split?: SplitEntry[] | null;
}

export type FlagReason = 'disabled' | 'targeting_match' | 'targeting_miss' | 'rollout' | 'error';

export interface FlagEvaluation {
  enabled: boolean;
  reason: FlagReason;
  rule?: string;
  /** Typed flags only: the variation served and its value (absent when none is: off without off_variation). */
  variation?: string;
  value?: unknown;
  /** Typed flags only: how the variation was chosen (variations.ts). */
  variation_reason?: VariationReason;
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

/** evaluateFlag: the boolean answer (the table above), then for a typed flag the variation it serves (variations.ts). */
export function evaluateFlag(
  flag: FlagDefinition,
  userId: string,
  context: unknown,
  env: EvaluationEnv = {},
): FlagEvaluation {
  const answer = evaluateOnOff(flag, userId, context, env);
  return isTypedFlag(flag) ? withVariation(flag, answer, userId, context, env) : answer;
}

function served(flag: FlagDefinition, answer: FlagEvaluation, key: string | null | undefined, how: VariationReason): FlagEvaluation {
  const variation = typeof key === 'string' ? flag.variations!.find((v) => v.key === key) : undefined;
  if (!variation) return how === 'off' ? { ...answer, variation_reason: how } : answer;
  return { ...answer, variation: variation.key, value: variation.value, variation_reason: how };
}

function withVariation(flag: FlagDefinition, answer: FlagEvaluation, userId: string, context: unknown, env: EvaluationEnv): FlagEvaluation {
  if (!answer.enabled) return served(flag, answer, flag.off_variation, 'off');
  const fromSplit = (split: SplitEntry[]) => split[pickSplit(split, splitBucket(flag.key, String(userId)))]?.variation;
  const ctx = withUserId(context, userId);
  for (const rule of Array.isArray(flag.variation_rules) ? flag.variation_rules : []) {
    let matched: boolean;
    try {
      matched = !hasTargetingRules(rule.targeting_rules) || (isRuleSetShape(rule.targeting_rules) && evaluateRuleSet(rule.targeting_rules, ctx, env));
    } catch {
      matched = false;
    }
    if (!matched) continue;
    return Array.isArray(rule.split) ? served(flag, answer, fromSplit(rule.split), 'rule_split') : served(flag, answer, rule.variation, 'rule');
  }
  if (Array.isArray(flag.variation_split)) return served(flag, answer, fromSplit(flag.variation_split), 'split');
  return served(flag, answer, flag.default_variation, 'default');
}

function evaluateOnOff(flag: FlagDefinition, userId: string, context: unknown, env: EvaluationEnv): FlagEvaluation {
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
    // SegmentError (missing / invalid segment) — and, defensively, anything else.
    return { enabled: false, reason: 'error' };
  }
}
