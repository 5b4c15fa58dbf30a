import type { FeatureFlagRow } from '../../db/schema/flags.js';
import type { Clock } from '../../platform/clock.js';
import { evaluateFlag, type CompiledSegment, type EvaluationEnv, type FlagDefinition, type FlagEvaluation } from '../../targeting/index.js';
import { compileSegment, type SegmentDefinition } from '../segments/service.js';

/**
 * The compiled in-memory ruleset: every flag plus the segments their rules name, loaded with two queries and then
 * used by every evaluation until a flag or segment write invalidates it (in this process at once, in the others
 * through the bus). Evaluations therefore read no flag or segment row. The one exception is membership of id_list
 * segments: they may hold 1,000,000 ids each, too many to keep in every process, so an evaluation that reaches an
 * active flag naming one asks the members table once for the subject's memberships (a primary-key probe per segment).
 */
export interface CompiledFlag {
  row: FeatureFlagRow;
  definition: FlagDefinition;
  /** The id_list segments the rules name: their membership is looked up per evaluation. */
  idListSegmentIds: string[];
}

export interface RulesetSnapshot {
  /** Every flag, ordered by key. */
  flags: CompiledFlag[];
  byKey: Map<string, CompiledFlag>;
  /** The flags that are not archived (what the user route answers for). */
  live: CompiledFlag[];
  /** The segments the flags name (absent: the id names no segment). */
  segments: Map<string, SegmentDefinition>;
}

export interface RulesetSource {
  allFlags(): Promise<FeatureFlagRow[]>;
  segmentDefinitions(ids: string[]): Promise<SegmentDefinition[]>;
}

export async function loadRuleset(source: RulesetSource): Promise<RulesetSnapshot> {
  const rows = await source.allFlags();
  const segmentIds = [...new Set(rows.flatMap((r) => r.segmentIds))];
  const segments = new Map((await source.segmentDefinitions(segmentIds)).map((s) => [s.id, s]));
  const flags = rows.map((row): CompiledFlag => ({
    row,
    definition: {
      key: row.key,
      is_active: row.status === 'ACTIVE',
      status: row.status.toLowerCase(),
      rollout_percentage: row.rolloutPercentage,
      targeting_rules: row.targetingRules ?? null,
    },
    idListSegmentIds: row.segmentIds.filter((id) => segments.get(id)?.kind === 'id_list'),
  }));
  const live = flags.filter((f) => f.row.status !== 'ARCHIVED');
  return { flags, byKey: new Map(flags.map((f) => [f.row.key, f])), live, segments };
}

/**
 * Holds the current snapshot and rebuilds it lazily. A snapshot whose load started before an invalidation is never
 * kept: the next caller loads again, so a change is visible to every request that starts after its write returned.
 * `maxAgeMs` bounds staleness should a cross-process message be lost (e.g. Redis reconnecting).
 */
export function createRulesetCache(load: () => Promise<RulesetSnapshot>, clock: Clock, maxAgeMs: number) {
  let generation = 0;
  let current: { generation: number; loadedAt: number; snapshot: Promise<RulesetSnapshot> } | undefined;
  return {
    get(): Promise<RulesetSnapshot> {
      const now = clock.now().getTime();
      if (!current || current.generation !== generation || now - current.loadedAt > maxAgeMs) {
        const entry = { generation, loadedAt: now, snapshot: load() };
        current = entry;
        entry.snapshot.catch(() => {
          if (current === entry) current = undefined;
        });
      }
      return current.snapshot;
    },
    invalidate(): void {
      generation += 1;
      current = undefined;
    },
  };
}

/**
 * Evaluates flags of one snapshot for one user. The rules see `user_id` from the context when it sets its own, else
 * the given user id (evaluateFlag's rule), so id_list membership is looked up for that same subject.
 */
export async function evaluateFlags(
  snapshot: RulesetSnapshot,
  flags: CompiledFlag[],
  userId: string,
  context: Record<string, unknown>,
  memberOf: (memberId: string, segmentIds: string[]) => Promise<Set<string>>,
): Promise<FlagEvaluation[]> {
  const ownUserId = Object.prototype.hasOwnProperty.call(context, 'user_id');
  const subject = ownUserId ? context.user_id : userId;
  // Set once here, evaluateFlag would copy the context for every flag to add the same user_id.
  const seen = ownUserId ? context : { ...context, user_id: userId };
  const idLists = [...new Set(flags.filter((f) => f.definition.is_active).flatMap((f) => f.idListSegmentIds))];
  const members = idLists.length > 0 && typeof subject === 'string' ? await memberOf(subject, idLists) : new Set<string>();
  const isMemberOf = (segmentId: string, memberId: string) => memberId === subject && members.has(segmentId);
  const compiled = new Map<string, CompiledSegment>();
  const env: EvaluationEnv = {
    segments: (id) => {
      const def = snapshot.segments.get(id);
      if (!def) return undefined;
      let segment = compiled.get(id);
      if (!segment) compiled.set(id, (segment = compileSegment(def, isMemberOf)));
      return segment;
    },
  };
  return flags.map((f) => evaluateFlag(f.definition, userId, seen, env));
}
