import type { FlagEvaluation } from '../../targeting/index.js';

/**
 * How an Uplift evaluation reads in OFREP (docs/api-notes.md, "OFREP reasons"): pure, so that the mapping is pinned by
 * unit tests and shared by the single and bulk routes.
 */
export type OfrepReason = 'STATIC' | 'TARGETING_MATCH' | 'SPLIT' | 'DISABLED' | 'DEFAULT';
export type OfrepErrorCode = 'PARSE_ERROR' | 'TARGETING_KEY_MISSING' | 'INVALID_CONTEXT' | 'GENERAL' | 'FLAG_NOT_FOUND';

export interface OfrepSuccess {
  value: boolean;
  variant: 'on' | 'off';
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
}

export const EVALUATION_ERROR = 'The flag names a segment that cannot be evaluated';

/**
 * OpenFeature's reasons: DISABLED for an inactive flag; TARGETING_MATCH when a rule decided (the user matched and
 * everyone matched is on); SPLIT when the pseudorandom rollout decided (a partial rollout, inside or outside); STATIC
 * when nothing about the user decided (no rules, rollout 0 or 100); DEFAULT when rules exist and the user matched none,
 * so the flag's fallback (off) is served. An evaluation error (an unusable segment) is a failure GENERAL.
 */
export function ofrepAnswer(flag: OfrepFlagFacts, evaluation: FlagEvaluation): OfrepSuccess | OfrepFailure {
  const pct = flag.rolloutPercentage ?? 100;
  const partial = pct > 0 && pct < 100;
  const served = (value: boolean, reason: OfrepReason): OfrepSuccess => ({ value, variant: value ? 'on' : 'off', reason });
  switch (evaluation.reason) {
    case 'disabled':
      return served(false, 'DISABLED');
    case 'error':
      return { errorCode: 'GENERAL', errorDetails: EVALUATION_ERROR };
    case 'targeting_miss':
      return served(false, 'DEFAULT');
    case 'targeting_match':
      return served(true, partial ? 'SPLIT' : 'TARGETING_MATCH');
    case 'rollout':
      return served(evaluation.enabled, partial || flag.hasRules ? 'SPLIT' : 'STATIC');
  }
}

/**
 * Whether answering for this flag needs `targetingKey`: an active flag whose answer depends on who the user is
 * through bucketing (a partial rollout) or id-list membership. Rules on context attributes do not need it.
 */
export function needsTargetingKey(flag: OfrepFlagFacts & { isActive: boolean; idListSegments: number }): boolean {
  if (!flag.isActive) return false;
  const pct = flag.rolloutPercentage ?? 100;
  return (pct > 0 && pct < 100) || flag.idListSegments > 0;
}
