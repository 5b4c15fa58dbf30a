/**
 * The ruleset made ready for evaluation with the service's own compiled evaluator (src/targeting, bundled): the
 * same flag definitions, segments and evaluation the service derives from its snapshot, so SDK and service answer
 * alike (the golden vectors in test/vectors/flags.json pin it).
 */
import {
  BUCKETING,
  collectSegmentIds,
  compileFlagSet,
  flagDefinitionOf,
  SPLIT_BUCKETING,
  type CompiledSegment,
  type EvaluationEnv,
  type FlagEvaluation,
  type FlagEvaluator,
  type FlagSetEvaluator,
} from '../../src/targeting/index.js';
import type { Ruleset, RulesetFlag, RulesetSegment } from './types.js';

type ValueType = 'boolean' | 'string' | 'number' | 'json';

export interface CompiledRuleset {
  /** The service's version of it (the ETag's value), when known. */
  version: string | undefined;
  ruleset: Ruleset;
  /** Every flag (archived ones answer `disabled`). */
  byKey: Map<string, FlagEvaluator>;
  /** Each flag's value type (`boolean` for a flag without one). */
  typeByKey: Map<string, ValueType>;
  /** Each flag's evaluator and value type, for getValue's one lookup. */
  valueByKey: Map<string, { flag: FlagEvaluator; type: ValueType }>;
  /** The flags that are not archived: what `allEnabled` answers for, as the service's user route does. */
  liveKeys: string[];
  live: FlagSetEvaluator;
  env: EvaluationEnv;
}

export class RulesetError extends Error {
  override readonly name = 'RulesetError';
}

/**
 * Members of id_list segments are not in the ruleset (up to 1,000,000 per segment): a flag whose answer depends on
 * one cannot be decided locally, and answers as the service does for a segment it cannot evaluate: off, `error`
 * (decidedWithoutMembers answers the flags whose answer does not depend on it).
 */
const MEMBERS_NOT_IN_RULESET = () => {
  throw new RulesetError('id_list segment members are not in the ruleset');
};

/** At most this many id_list segments per flag are tried both ways (2^n evaluations); beyond it, `error`. */
export const MAX_UNKNOWN_MEMBERSHIPS = 4;

/**
 * The id_list segments a flag's rules and variation rules name (a segment's own rules name no segment), as the
 * service finds them.
 */
function idListsNamed(flag: RulesetFlag, segments: Map<string, RulesetSegment>): string[] {
  const named = [flag.targeting_rules, ...(Array.isArray(flag.variation_rules) ? flag.variation_rules.map((r) => r?.targeting_rules) : [])].flatMap(collectSegmentIds);
  return [...new Set(named)].filter((id) => segments.get(id)?.kind === 'id_list');
}

const sameAnswer = (a: FlagEvaluation, b: FlagEvaluation) =>
  a.enabled === b.enabled && a.reason === b.reason && a.rule === b.rule && a.variation === b.variation && a.variation_reason === b.variation_reason;

/**
 * A flag naming id_list segments, answered locally when the answer does not depend on the user's membership: it is
 * evaluated once per combination of memberships (member or not of each segment), and when every combination gives
 * the same answer, rule included, that is the service's answer too, whatever the members are (e.g. another branch of
 * an OR already matches, or the user is outside the rollout). Otherwise it answers as before: off, `error`.
 */
function decidedWithoutMembers(flag: FlagEvaluator, idLists: string[], segments: Map<string, CompiledSegment>): FlagEvaluator {
  if (idLists.length === 0 || idLists.length > MAX_UNKNOWN_MEMBERSHIPS) return flag;
  const envs = Array.from({ length: 2 ** idLists.length }, (_, mask): EvaluationEnv => ({
    segments: (id) => {
      const i = idLists.indexOf(id);
      return i < 0 ? segments.get(id) : { kind: 'id_list', has: () => ((mask >> i) & 1) === 1 };
    },
  }));
  const decided = (how: 'evaluate' | 'explain', userId: string, context: unknown): FlagEvaluation | undefined => {
    const first = flag[how](userId, context, envs[0]);
    for (let i = 1; i < envs.length; i++) if (!sameAnswer(first, flag[how](userId, context, envs[i]))) return undefined;
    return first;
  };
  // `evaluate` has no rule, so an answer whose matched rule alone depends on membership is decided there and not in
  // `explain` (isEnabled answers; evaluate() says error).
  return {
    evaluate: (userId, context, env) => decided('evaluate', userId, context) ?? flag.evaluate(userId, context, env),
    explain: (userId, context, env) => decided('explain', userId, context) ?? flag.explain(userId, context, env),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const STATUSES = new Set(['active', 'inactive', 'archived']);

function checkFlag(f: unknown, i: number): RulesetFlag {
  const ok =
    isObject(f) &&
    typeof f.key === 'string' &&
    typeof f.is_active === 'boolean' &&
    STATUSES.has(f.status as string) &&
    typeof f.rollout_percentage === 'number' &&
    (f.targeting_rules === null || isObject(f.targeting_rules)) &&
    (f.value_type === undefined || (['string', 'number', 'json'].includes(f.value_type as string) && Array.isArray(f.variations) &&
      f.variations.every((v) => isObject(v) && typeof v.key === 'string')));
  if (!ok) throw new RulesetError(`flags[${i}] is not a flag`);
  return f as unknown as RulesetFlag;
}

function checkSegment(s: unknown, i: number): RulesetSegment {
  const ok = isObject(s) && typeof s.id === 'string' && (s.kind === 'rules' || s.kind === 'id_list') && typeof s.valid === 'boolean';
  if (!ok) throw new RulesetError(`segments[${i}] is not a segment`);
  return s as unknown as RulesetSegment;
}

/** Checks and compiles a ruleset (parsed or JSON text); throws RulesetError when it is not one this SDK can evaluate. */
export function compileRuleset(input: unknown, version?: string): CompiledRuleset {
  let data = input;
  if (typeof input === 'string') {
    try {
      data = JSON.parse(input);
    } catch {
      throw new RulesetError('the ruleset is not JSON');
    }
  }
  if (!isObject(data) || !Array.isArray(data.flags) || !Array.isArray(data.segments) || !isObject(data.bucketing)) {
    throw new RulesetError('not a ruleset');
  }
  // A new bucketing version is a new mapping of users to buckets: evaluating it with this one would move users.
  if (data.bucketing.name !== BUCKETING.name || data.bucketing.version !== BUCKETING.version) {
    throw new RulesetError('the ruleset uses a bucketing version this SDK does not know: upgrade @uplift/sdk');
  }
  // Likewise for the splits of typed flags (a ruleset from a service without typed flags has none).
  const split = data.split_bucketing;
  if (split !== undefined && (!isObject(split) || split.name !== SPLIT_BUCKETING.name || split.version !== SPLIT_BUCKETING.version)) {
    throw new RulesetError('the ruleset uses a split bucketing version this SDK does not know: upgrade @uplift/sdk');
  }
  const flags = data.flags.map(checkFlag);
  const listed = new Map(data.segments.map((s, i): [string, RulesetSegment] => {
    const seg = checkSegment(s, i);
    return [seg.id, seg];
  }));
  const segments = new Map(
    [...listed.values()].map((seg): [string, CompiledSegment] => [
      seg.id, seg.kind === 'id_list' ? { kind: 'id_list', has: MEMBERS_NOT_IN_RULESET } : { kind: 'rules', rules: seg.rules, valid: seg.valid },
    ]),
  );
  const set = compileFlagSet(flags.map(flagDefinitionOf));
  const evaluators = flags.map((f, i) => decidedWithoutMembers(set.flags[i], idListsNamed(f, listed), segments));
  const byKey = new Map(flags.map((f, i): [string, FlagEvaluator] => [f.key, evaluators[i]]));
  const typeByKey = new Map(flags.map((f) => [f.key, f.value_type ?? 'boolean'] as const));
  const valueByKey = new Map(flags.map((f, i) => [f.key, { flag: evaluators[i], type: f.value_type ?? 'boolean' }] as const));
  const compiled = set.live;
  const liveKeys = set.liveIndexes.map((i) => flags[i].key);
  const liveFlags = set.liveIndexes.map((i) => evaluators[i]);
  // The live flags that name id_list segments: their answers in a whole-set evaluation are taken one by one.
  const undecided = liveFlags.flatMap((flag, i) => (flag === compiled.flags[i] ? [] : [i]));
  const live: FlagSetEvaluator = undecided.length === 0 ? compiled : {
    flags: liveFlags,
    evaluateAll(userId, context, env) {
      const out = compiled.evaluateAll(userId, context, env);
      for (const i of undecided) out[i] = liveFlags[i].evaluate(userId, context, env);
      return out;
    },
    enabledAll(userId, context, env) {
      const out = compiled.enabledAll(userId, context, env);
      for (const i of undecided) out[i] = liveFlags[i].evaluate(userId, context, env).enabled;
      return out;
    },
  };
  return { version, ruleset: data as unknown as Ruleset, byKey, typeByKey, valueByKey, liveKeys, live, env: { segments: (id) => segments.get(id) } };
}

/** The keys whose definition differs between two rulesets (added, removed or changed), for change listeners. */
export function changedFlagKeys(before: Ruleset | undefined, after: Ruleset): string[] {
  const previous = new Map((before?.flags ?? []).map((f) => [f.key, JSON.stringify(f)]));
  const changed = new Set<string>();
  for (const f of after.flags) {
    if (previous.get(f.key) !== JSON.stringify(f)) changed.add(f.key);
    previous.delete(f.key);
  }
  for (const key of previous.keys()) changed.add(key);
  // A segment change can change any flag naming it: every flag whose rules name a changed segment counts.
  const segmentText = (r: Ruleset | undefined) => new Map((r?.segments ?? []).map((s) => [s.id, JSON.stringify(s)]));
  const [oldSegments, newSegments] = [segmentText(before), segmentText(after)];
  const changedSegments = [...new Set([...oldSegments.keys(), ...newSegments.keys()])].filter((id) => oldSegments.get(id) !== newSegments.get(id));
  if (changedSegments.length > 0) {
    for (const f of after.flags) {
      const rules = JSON.stringify(f.targeting_rules);
      if (changedSegments.some((id) => rules.includes(JSON.stringify(id)))) changed.add(f.key);
    }
  }
  return [...changed].sort();
}
