import type { FeatureFlagRow } from '../../db/schema/feature-flags.js';
import type { Clock } from '../../platform/clock.js';
import {
  compileFlagSet,
  flagDefinitionOf,
  type EvaluationEnv,
  type FlagDefinition,
  type FlagEvaluator,
  type FlagSetEvaluator,
} from '../../targeting/index.js';
import { withoutMembers, type SegmentDefinition } from '../segments/service.js';
import { report, telemetry } from '../../platform/telemetry.js';

/**
 * The compiled in-memory ruleset: every flag plus the segments their rules name, loaded with two queries and then
 * used by every evaluation until a flag or segment write invalidates it (in this process at once, in the others
 * through the bus). Evaluations therefore read no flag or segment row. The one exception is membership of id_list
 * segments: they may hold 1,000,000 ids each, too many to keep in every process, so an evaluation that reaches an
 * active flag naming one asks the members table once for the subject's memberships (a primary-key probe per segment).
 */
export interface CompiledFlag {
  row: FeatureFlagRow;
  /** The flag as GET /sdk/ruleset sends it. */
  wire: RulesetFlag;
  definition: FlagDefinition;
  /** The definition compiled once for this snapshot: every evaluation of the flag goes through it. */
  evaluator: FlagEvaluator;
  /** The id_list segments the rules name: their membership is looked up per evaluation. */
  idListSegmentIds: string[];
}

export interface RulesetSnapshot {
  /** Every flag, ordered by key. */
  flags: CompiledFlag[];
  byKey: Map<string, CompiledFlag>;
  /** The flags that are not archived (what the user route answers for). */
  live: CompiledFlag[];
  /** `live` compiled together: evaluateAll and enabledAll answer for every live flag, in `live` order, sharing repeated work. */
  liveEvaluator: FlagSetEvaluator;
  /** The id_list segments the active flags of `live` name: the memberships the user route looks up. */
  liveIdListSegmentIds: string[];
  /** The user route's answer, written from `live` without building an object (see userFlagsJson). */
  liveJson: UserFlagsJsonWriter;
  /** The segments the flags name (absent: the id names no segment). */
  segments: Map<string, SegmentDefinition>;
  /** The segments as the evaluator takes them, id_list ones holding nobody: for evaluations needing no membership. */
  withoutMembers: EvaluationEnv;
}

export interface RulesetSource {
  allFlags(): Promise<FeatureFlagRow[]>;
  segmentDefinitions(ids: string[]): Promise<SegmentDefinition[]>;
}

export async function loadRuleset(source: RulesetSource): Promise<RulesetSnapshot> {
  report(telemetry.rulesetLoaded, {});
  const rows = await source.allFlags();
  const segmentIds = [...new Set(rows.flatMap((r) => r.segmentIds))];
  const segments = new Map((await source.segmentDefinitions(segmentIds)).map((s) => [s.id, s]));
  const wire = rows.map(rulesetFlagOf);
  const definitions = wire.map(flagDefinitionOf);
  const compiled = compileFlagSet(definitions);
  const flags = rows.map((row, i): CompiledFlag => ({
    row,
    wire: wire[i],
    definition: definitions[i],
    evaluator: compiled.flags[i],
    idListSegmentIds: row.segmentIds.filter((id) => segments.get(id)?.kind === 'id_list'),
  }));
  const live = compiled.liveIndexes.map((i) => flags[i]);
  return {
    flags,
    byKey: new Map(flags.map((f) => [f.row.key, f])),
    live,
    liveEvaluator: compiled.live,
    liveIdListSegmentIds: [...new Set(live.flatMap(flagIdListSegmentIds))],
    liveJson: userFlagsJsonWriter(live.map((f) => f.row.key)),
    segments,
    withoutMembers: withoutMembers(segments),
  };
}

/** A flag as GET /sdk/ruleset sends it: the typed fields only for typed flags (a boolean flag's entry is as before). */
export interface RulesetFlag extends FlagDefinition {
  id: string;
  status: 'active' | 'inactive' | 'archived';
  rollout_percentage: number;
  targeting_rules: unknown;
  default_value: boolean;
}

export function rulesetFlagOf(row: FeatureFlagRow): RulesetFlag {
  const flag: RulesetFlag = {
    id: row.id,
    key: row.key,
    status: row.status.toLowerCase() as RulesetFlag['status'],
    is_active: row.status === 'ACTIVE',
    rollout_percentage: row.rolloutPercentage,
    targeting_rules: row.targetingRules ?? null,
    default_value: row.defaultValue,
  };
  if (row.valueType === 'boolean') return flag;
  return {
    ...flag,
    value_type: row.valueType,
    variations: row.variations,
    default_variation: row.defaultVariation,
    off_variation: row.offVariation,
    variation_rules: row.variationRules,
    variation_split: row.variationSplit,
  };
}

export type UserFlagsJsonWriter = (enabled: readonly boolean[]) => string;

/**
 * `JSON.stringify` of the key → on/off map for `keys` (distinct), given whether each is on in the same order, with each
 * key's JSON text (`{"key":`, then `,"key":`) prepared once per snapshot: the hot path concatenates 2 pieces per flag
 * instead of building a 50-key object and serialising it.
 */
export function userFlagsJsonWriter(keys: readonly string[]): UserFlagsJsonWriter {
  const heads = keys.map((key, i) => `${i === 0 ? '{' : ','}${JSON.stringify(key)}:`);
  return (enabled) => {
    if (heads.length === 0) return '{}';
    let json = '';
    for (let i = 0; i < heads.length; i++) json += heads[i] + (enabled[i] ? 'true' : 'false');
    return json + '}';
  };
}

/**
 * Holds the current snapshot and rebuilds it lazily. A snapshot whose load started before an invalidation is never
 * kept: the next caller loads again, so a change is visible to every request that starts after its write returned.
 * `maxAgeMs` bounds staleness should a cross-process message be lost (e.g. Redis reconnecting): past it, callers keep
 * getting the current snapshot while one reload runs in the background, which replaces it unless an invalidation
 * came first (requests never wait on that safety net).
 */
export function createRulesetCache(load: () => Promise<RulesetSnapshot>, clock: Clock, maxAgeMs: number) {
  interface Entry {
    generation: number;
    loadedAt: number;
    snapshot: Promise<RulesetSnapshot>;
  }
  let generation = 0;
  let current: Entry | undefined;
  let refreshing: Entry | undefined;

  const start = (now: number): Entry => ({ generation, loadedAt: now, snapshot: load() });

  function refresh(now: number): void {
    const entry = (refreshing = start(now));
    entry.snapshot.then(
      () => {
        if (entry.generation === generation) current = entry;
      },
      () => undefined,
    ).finally(() => {
      if (refreshing === entry) refreshing = undefined;
    });
  }

  return {
    get(): Promise<RulesetSnapshot> {
      const now = clock.now().getTime();
      if (current && current.generation === generation) {
        if (now - current.loadedAt > maxAgeMs && refreshing === undefined) refresh(now);
        return current.snapshot;
      }
      const entry = (current = start(now));
      entry.snapshot.catch(() => {
        if (current === entry) current = undefined;
      });
      return entry.snapshot;
    },
    invalidate(): void {
      generation += 1;
      current = undefined;
    },
  };
}

/**
 * Whose id_list membership evaluating flags for this user looks up: the rules see `user_id` from the context when it
 * sets its own, else the given user id (evaluateFlag's rule). The segments service asks the members table for it
 * only when an active flag evaluated names an id_list segment (`idListSegmentIds`).
 */
export function membershipSubject(userId: string, context: Record<string, unknown>): unknown {
  return Object.prototype.hasOwnProperty.call(context, 'user_id') ? context.user_id : userId;
}

/** The id_list segments evaluating this flag may reach: only an active flag evaluates its rules. */
export function flagIdListSegmentIds(flag: CompiledFlag): string[] {
  return flag.definition.is_active ? flag.idListSegmentIds : [];
}
