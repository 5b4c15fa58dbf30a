/**
 * Flag evaluation for the evaluate, user and OFREP routes: the compiled ruleset of the environment asked for, the
 * id-list memberships its flags need, and the answers (one flag with its satisfied conditions, several with their
 * values, every live flag as key to on/off).
 */
import type { Loc } from '../../platform/errors.js';
import { report, telemetry } from '../../platform/telemetry.js';
import type { FlagEvaluation } from '../../targeting/index.js';
import type { SegmentsService } from '../segments/service.js';
import { assertTargetingContext, QUERY_CONTEXT } from '../segments/domain.js';
import { flagIdListSegmentIds, membershipSubject, type CompiledFlag, type RulesetSnapshot } from './ruleset.js';
import type { Evaluation, FlagView, UserFlagDetails } from './schemas.js';

/** A flag's answer for one user with what a caller mapping it elsewhere (OFREP) needs of the flag. */
export interface FlagDetails extends FlagEvaluation {
  flag_key: string;
  status: FlagView['status'];
  value_type: FlagView['value_type'];
}

function detailsOf(flag: CompiledFlag, evaluation: FlagEvaluation): FlagDetails {
  return { flag_key: flag.row.key, status: flag.wire.status, value_type: flag.row.valueType, ...evaluation };
}

export interface FlagEvaluationDeps {
  /** The compiled ruleset of an environment (absent: the default's). */
  rulesetIn(environment: string | undefined): Promise<RulesetSnapshot>;
  segments: Pick<SegmentsService, 'membershipEnv'>;
}

export function createFlagEvaluation({ rulesetIn, segments }: FlagEvaluationDeps) {
  async function evaluate(key: string, userId: string, context: Record<string, unknown> | null | undefined, contextLoc: Loc, environment?: string): Promise<Evaluation> {
    const ctx = context ?? {};
    assertTargetingContext(ctx, contextLoc);
    const snapshot = await rulesetIn(environment);
    const flag = snapshot.byKey.get(key);
    report(telemetry.flagsEvaluated, { flags: 1 });
    if (!flag) return { flag_key: key, enabled: false, reason: 'not_found' };
    const env = await segments.membershipEnv(snapshot.segments, flagIdListSegmentIds(flag), membershipSubject(userId, ctx), snapshot.withoutMembers);
    // The one answer that names the satisfied conditions (`rule`): the only evaluation that renders them.
    return { flag_key: key, ...flag.evaluator.explain(userId, ctx, env) };
  }

  /**
   * The one evaluation of flags with their values, for every caller that needs more than on/off (the user route's
   * details, OFREP): for `keys` (each known key, archived ones included: they answer `disabled`; unknown keys are
   * left out), or without keys every flag that is not archived, in key order. Each answer is the evaluate route's
   * (`rule` only for a single key) with the flag's status and value_type. The context is held to the limits, a
   * refusal being a 422 at `contextLoc`.
   */
  async function evaluateDetails(
    userId: string,
    context: Record<string, unknown> | null | undefined,
    contextLoc: Loc,
    keys?: readonly string[],
    environment?: string,
  ): Promise<FlagDetails[]> {
    const ctx = context ?? {};
    assertTargetingContext(ctx, contextLoc);
    const snapshot = await rulesetIn(environment);
    const subject = membershipSubject(userId, ctx);
    if (keys !== undefined) {
      const found = keys.flatMap((key) => snapshot.byKey.get(key) ?? []);
      report(telemetry.flagsEvaluated, { flags: found.length });
      const idLists = [...new Set(found.flatMap(flagIdListSegmentIds))];
      const env = await segments.membershipEnv(snapshot.segments, idLists, subject, snapshot.withoutMembers);
      return found.map((flag) => detailsOf(flag, found.length === 1 ? flag.evaluator.explain(userId, ctx, env) : flag.evaluator.evaluate(userId, ctx, env)));
    }
    const env = await segments.membershipEnv(snapshot.segments, snapshot.liveIdListSegmentIds, subject, snapshot.withoutMembers);
    report(telemetry.flagsEvaluated, { flags: snapshot.live.length });
    const answers = snapshot.liveEvaluator.evaluateAll(userId, ctx, env);
    return snapshot.live.map((flag, i) => detailsOf(flag, answers[i]));
  }

  /**
   * Every flag that is not archived, as key to on/off for this user: the JSON object, already serialised. The
   * context has been held to the limits where it was parsed (parseContextParam).
   */
  async function userFlagsJson(userId: string, context: Record<string, unknown>, environment?: string): Promise<string> {
    const snapshot = await rulesetIn(environment);
    const env = await segments.membershipEnv(snapshot.segments, snapshot.liveIdListSegmentIds, membershipSubject(userId, context), snapshot.withoutMembers);
    report(telemetry.flagsEvaluated, { flags: snapshot.live.length });
    return snapshot.liveJson(snapshot.liveEvaluator.enabledAll(userId, context, env));
  }

  /** The user route with details=true: every flag that is not archived, key to {enabled, variation?, value?}. */
  async function userFlagDetails(userId: string, context: Record<string, unknown>, environment?: string): Promise<Record<string, UserFlagDetails>> {
    const result: Record<string, UserFlagDetails> = {};
    for (const d of await evaluateDetails(userId, context, QUERY_CONTEXT, undefined, environment)) {
      result[d.flag_key] = d.variation === undefined ? { enabled: d.enabled } : { enabled: d.enabled, variation: d.variation, value: d.value };
    }
    return result;
  }

  return { evaluate, evaluateDetails, userFlagsJson, userFlagDetails };
}
