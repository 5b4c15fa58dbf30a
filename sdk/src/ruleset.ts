/**
 * The ruleset made ready for evaluation with the service's own compiled evaluator (src/targeting, bundled): the
 * same flag definitions, segments and evaluation the service derives from its snapshot, so SDK and service answer
 * alike (the golden vectors in test/vectors/flags.json pin it).
 */
import {
  BUCKETING,
  compileFlag,
  compileFlags,
  type CompiledSegment,
  type EvaluationEnv,
  type FlagDefinition,
  type FlagEvaluator,
  type FlagSetEvaluator,
} from '../../src/targeting/index.js';
import type { Ruleset, RulesetFlag, RulesetSegment } from './types.js';

export interface CompiledRuleset {
  /** The service's version of it (the ETag's value), when known. */
  version: string | undefined;
  ruleset: Ruleset;
  /** Every flag (archived ones answer `disabled`). */
  byKey: Map<string, FlagEvaluator>;
  /** The flags that are not archived: what `allEnabled` answers for, as the service's user route does. */
  liveKeys: string[];
  live: FlagSetEvaluator;
  env: EvaluationEnv;
}

export class RulesetError extends Error {
  override readonly name = 'RulesetError';
}

/**
 * Members of id_list segments are not in the ruleset (up to 1,000,000 per segment): a flag whose evaluation reaches
 * one cannot be decided locally, and answers as the service does for a segment it cannot evaluate: off, `error`.
 */
const MEMBERS_NOT_IN_RULESET = () => {
  throw new RulesetError('id_list segment members are not in the ruleset');
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const STATUSES = new Set(['active', 'inactive', 'archived']);

function checkFlag(f: unknown, i: number): RulesetFlag {
  const ok =
    isObject(f) &&
    typeof f.key === 'string' &&
    typeof f.is_active === 'boolean' &&
    STATUSES.has(f.status as string) &&
    typeof f.rollout_percentage === 'number' &&
    (f.targeting_rules === null || isObject(f.targeting_rules));
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
  const flags = data.flags.map(checkFlag);
  const segments = new Map(
    data.segments.map((s, i): [string, CompiledSegment] => {
      const seg = checkSegment(s, i);
      return [seg.id, seg.kind === 'id_list' ? { kind: 'id_list', has: MEMBERS_NOT_IN_RULESET } : { kind: 'rules', rules: seg.rules, valid: seg.valid }];
    }),
  );
  const definitions = flags.map((f): FlagDefinition => ({
    key: f.key,
    is_active: f.is_active,
    status: f.status,
    rollout_percentage: f.rollout_percentage,
    targeting_rules: f.targeting_rules,
  }));
  const isLive = (f: RulesetFlag) => f.status !== 'archived';
  const live = compileFlags(definitions.filter((_, i) => isLive(flags[i])));
  let liveIndex = 0;
  const byKey = new Map(flags.map((f, i): [string, FlagEvaluator] => [f.key, isLive(f) ? live.flags[liveIndex++] : compileFlag(definitions[i])]));
  return {
    version,
    ruleset: data as unknown as Ruleset,
    byKey,
    liveKeys: flags.filter(isLive).map((f) => f.key),
    live,
    env: { segments: (id) => segments.get(id) },
  };
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
