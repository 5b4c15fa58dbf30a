import type { FlagEvaluation } from '../../targeting/index.js';

/**
 * How an Uplift evaluation reads in OFREP (docs/api-notes.md, "OFREP reasons"): pure, so that the mapping is pinned by
 * unit tests and shared by the single and bulk routes.
 */
export type OfrepReason = 'STATIC' | 'TARGETING_MATCH' | 'SPLIT' | 'DISABLED' | 'DEFAULT';
export type OfrepErrorCode = 'PARSE_ERROR' | 'TARGETING_KEY_MISSING' | 'INVALID_CONTEXT' | 'GENERAL' | 'FLAG_NOT_FOUND';

export interface OfrepSuccess {
  /** Absent: the flag serves no value here (a typed flag off without off_variation), so the code default is used. */
  value?: unknown;
  variant?: string;
  reason: OfrepReason;
}
export interface OfrepFailure {
  errorCode: OfrepErrorCode;
  errorDetails: string;
}

/** What of a flag's definition the mapping reads. */
export interface OfrepFlagFacts {
  /** Rollout percentage, null meaning 100 (as the evaluator reads it). */
  rolloutPercentage: number | null;
  hasRules: boolean;
  /** A typed flag (value_type other than boolean, with variations): it serves variations, not true/false. */
  typed: boolean;
  /** A typed flag with a split (the flag's or a variation rule's): which variation depends on the user id. */
  hasSplits: boolean;
  /** A typed flag with variation rules: its default variation is then what no rule chose. */
  hasVariationRules: boolean;
}

export const EVALUATION_ERROR = 'The flag names a segment that cannot be evaluated';

/**
 * OpenFeature's reasons: DISABLED for an inactive flag; TARGETING_MATCH when a rule decided (the user matched and
 * everyone matched is on); SPLIT when the pseudorandom rollout decided (a partial rollout, inside or outside); STATIC
 * when nothing about the user decided (no rules, rollout 0 or 100); DEFAULT when rules exist and the user matched none,
 * so the flag's fallback (off) is served. An evaluation error (an unusable segment) is a failure GENERAL.
 */
function onOffReason(flag: OfrepFlagFacts, evaluation: FlagEvaluation): OfrepReason {
  const pct = flag.rolloutPercentage ?? 100;
  const partial = pct > 0 && pct < 100;
  switch (evaluation.reason) {
    case 'disabled':
      return 'DISABLED';
    case 'targeting_miss':
    case 'error':
      return 'DEFAULT';
    case 'targeting_match':
      return partial ? 'SPLIT' : 'TARGETING_MATCH';
    case 'rollout':
      return partial || flag.hasRules ? 'SPLIT' : 'STATIC';
  }
}

/**
 * A boolean flag answers true/false with variants on/off. A typed flag answers the variation served, its key as the
 * variant: a variation rule is TARGETING_MATCH, a split (the flag's or a rule's) SPLIT, the default variation DEFAULT
 * when variation rules exist and none matched, else (and the off variation) the reason of the on/off decision; with no
 * variation served the value is omitted (ADR 0006).
 */
export function ofrepAnswer(flag: OfrepFlagFacts, evaluation: FlagEvaluation): OfrepSuccess | OfrepFailure {
  if (evaluation.reason === 'error') return { errorCode: 'GENERAL', errorDetails: EVALUATION_ERROR };
  const reason = onOffReason(flag, evaluation);
  if (!flag.typed) return { value: evaluation.enabled, variant: evaluation.enabled ? 'on' : 'off', reason };
  const how = evaluation.enabled ? evaluation.variation_reason : undefined;
  const typedReason =
    how === 'rule' ? 'TARGETING_MATCH' : how === 'split' || how === 'rule_split' ? 'SPLIT' : how === 'default' && flag.hasVariationRules ? 'DEFAULT' : reason;
  return evaluation.variation === undefined
    ? { reason: typedReason }
    : { value: evaluation.value, variant: evaluation.variation, reason: typedReason };
}

/**
 * Whether answering for this flag needs `targetingKey`: an active flag whose answer depends on who the user is
 * through bucketing (a partial rollout, a split) or id-list membership. Rules on context attributes do not need it.
 */
export function needsTargetingKey(flag: OfrepFlagFacts & { isActive: boolean; idListSegments: number }): boolean {
  if (!flag.isActive) return false;
  const pct = flag.rolloutPercentage ?? 100;
  return (pct > 0 && pct < 100) || flag.hasSplits || flag.idListSegments > 0;
}
