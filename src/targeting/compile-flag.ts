/**
 * Compiled flags: evaluateFlag (flag.ts, the reference and its decision table) with the flag's state, rollout
 * threshold, the hash of its salt and its rules prepared once. `evaluate` answers `{enabled, reason}` as one of a
 * few shared frozen objects (nothing allocated per call) and never renders rule text; `explain` answers exactly what
 * evaluateFlag does, `rule` included.
 *
 * The rules see `user_id` = userId when the context has no own `user_id`, as in the reference, without copying the
 * context (see ImplicitUserId in compile.ts).
 *
 * The reference evaluates every condition of a flag's rules (to list them); `evaluate` short-circuits, which can only
 * differ where evaluating a condition throws, i.e. an id_list segment's `has` throwing (reason `error`). So a flag whose
 * rules name a segment is evaluated exhaustively, like the reference, and every other flag short-circuits.
 *
 * `compileFlags` compiles a ruleset's flags together so that `evaluateAll` looks up each attribute and computes each
 * repeated condition once for all of them (ConditionPool in compile.ts). What is shared lives for one evaluation
 * scope: one call of `evaluate`, `explain` or `evaluateAll`.
 */
import {
  asCtx,
  closeScope,
  compileRules,
  newConditionPool,
  NO_ENV,
  openScope,
  runRules,
  segmentFreeMatcher,
  type ConditionPool,
  type Ctx,
  type ImplicitUserId,
} from './compile.js';
import { describeRule, hasTargetingRules, type FlagDefinition, type FlagEvaluation } from './flag.js';
import { BUCKET_COUNT, bucketerFor, BucketUnit, flagSalt, percentageToBuckets } from './hash.js';
import type { EvaluationEnv } from './types.js';
import { isRuleSetShape } from './validate.js';
import { isTypedFlag, splitSalt, splitUppers, type FlagVariation, type SplitEntry, type VariationReason } from './variations.js';

const answer = (enabled: boolean, reason: FlagEvaluation['reason']): FlagEvaluation => Object.freeze({ enabled, reason });
const DISABLED = answer(false, 'disabled');
const ERROR = answer(false, 'error');
const TARGETING_MISS = answer(false, 'targeting_miss');
const TARGETING_MATCH = answer(true, 'targeting_match');
const ROLLED_IN = answer(true, 'rollout');
const ROLLED_OUT = answer(false, 'rollout');

export interface FlagEvaluator {
  /** evaluateFlag(flag, userId, context, env) without `rule`. The answer is shared and frozen. */
  evaluate(userId: string, context: unknown, env?: EvaluationEnv): FlagEvaluation;
  /** evaluateFlag(flag, userId, context, env), `rule` included. */
  explain(userId: string, context: unknown, env?: EvaluationEnv): FlagEvaluation;
  /**
   * Typed flags only: the variation evaluate(...) serves (its `variation` and `value`), or undefined where it serves
   * none. Only the value is asked for, so the rollout is decided before the rules (as `enabled` does).
   */
  serve?(userId: string, context: unknown, env?: EvaluationEnv): FlagVariation | undefined;
}

export interface FlagSetEvaluator {
  /** The flags, compiled, in the order given (each usable alone, e.g. to explain one). */
  flags: FlagEvaluator[];
  /** flags[i].evaluate(userId, context, env) for every i, with their shared attributes and conditions computed once. */
  evaluateAll(userId: string, context: unknown, env?: EvaluationEnv): FlagEvaluation[];
  /**
   * flags[i].evaluate(userId, context, env).enabled for every i. The rollout is decided first: a user outside a
   * flag's rollout is off whatever its rules answer (an evaluation error is off too), so only the rules of flags the
   * user is rolled into are evaluated.
   */
  enabledAll(userId: string, context: unknown, env?: EvaluationEnv): boolean[];
}

/** The user id standing in for an absent own `user_id` of the context (the rules see it as `user_id`). */
function implicitUserId(userId: string, ctx: Ctx): ImplicitUserId {
  return typeof userId === 'string' && (ctx === null || !Object.prototype.hasOwnProperty.call(ctx, 'user_id')) ? userId : undefined;
}

/**
 * One flag, compiled; runs inside the evaluation scope its caller opened, on the context as the rules see it. The
 * user id arrives as a BucketUnit, so that the flags of one evaluation encode it once for their rollout hashes.
 */
interface FlagProgram {
  evaluate(user: BucketUnit, ctx: Ctx, uid: ImplicitUserId, env: EvaluationEnv): FlagEvaluation;
  explain(user: BucketUnit, ctx: Ctx, uid: ImplicitUserId, env: EvaluationEnv): FlagEvaluation;
  /** evaluate(...).enabled, the rollout decided before the rules. */
  enabled(user: BucketUnit, ctx: Ctx, uid: ImplicitUserId, env: EvaluationEnv): boolean;
  /** Typed flags: the variation evaluate(...) serves, or undefined (FlagEvaluator.serve). */
  serve?(user: BucketUnit, ctx: Ctx, uid: ImplicitUserId, env: EvaluationEnv): FlagVariation | undefined;
}

/**
 * The unit of the last user evaluated: a user checked against many flags one call at a time (an SDK's `isEnabled`)
 * has the id encoded once, not once per flag. A unit is a pure function of its id, so reuse is safe.
 */
let lastUnit = new BucketUnit('');
function unitOf(userId: string): BucketUnit {
  const id = String(userId);
  return lastUnit.id === id ? lastUnit : (lastUnit = new BucketUnit(id));
}

/** Each call in an evaluation scope of its own (what shared conditions remember lives as long as the scope). */
function evaluatorOf(program: FlagProgram): FlagEvaluator {
  const serve = program.serve;
  return {
    ...(serve && {
      serve(userId: string, context: unknown, env = NO_ENV) {
        const outer = openScope();
        try {
          const ctx = asCtx(context);
          return serve(unitOf(userId), ctx, implicitUserId(userId, ctx), env);
        } finally {
          closeScope(outer);
        }
      },
    }),
    evaluate(userId, context, env = NO_ENV) {
      const outer = openScope();
      try {
        const ctx = asCtx(context);
        return program.evaluate(unitOf(userId), ctx, implicitUserId(userId, ctx), env);
      } finally {
        closeScope(outer);
      }
    },
    explain(userId, context, env = NO_ENV) {
      const outer = openScope();
      try {
        const ctx = asCtx(context);
        return program.explain(unitOf(userId), ctx, implicitUserId(userId, ctx), env);
      } finally {
        closeScope(outer);
      }
    },
  };
}

/** Compiles a flag once; the definition (and its rules) must not be mutated afterwards. */
export function compileFlag(flag: FlagDefinition): FlagEvaluator {
  return evaluatorOf(compileProgram(flag, newConditionPool()));
}

/**
 * Compiles the flags of one ruleset together: an attribute several flags read is looked up once per evaluation, and
 * a condition several flags repeat (same attribute, operator, value and negate) is computed once.
 */
export function compileFlags(flags: readonly FlagDefinition[]): FlagSetEvaluator {
  const pool = newConditionPool();
  const programs = flags.map((f) => compileProgram(f, pool));
  return {
    flags: programs.map(evaluatorOf),
    evaluateAll: (userId, context, env = NO_ENV) => runAll(programs, userId, context, env, (p, ...args) => p.evaluate(...args)),
    enabledAll: (userId, context, env = NO_ENV) => runAll(programs, userId, context, env, (p, ...args) => p.enabled(...args)),
  };
}

/** `run` for every program, in one evaluation scope, on the context as the rules see it. */
function runAll<T>(
  programs: FlagProgram[],
  userId: string,
  context: unknown,
  env: EvaluationEnv,
  run: (program: FlagProgram, user: BucketUnit, ctx: Ctx, uid: ImplicitUserId, env: EvaluationEnv) => T,
): T[] {
  const outer = openScope();
  try {
    const ctx = asCtx(context);
    const uid = implicitUserId(userId, ctx);
    const user = unitOf(userId);
    const results = new Array<T>(programs.length);
    for (let i = 0; i < programs.length; i++) results[i] = run(programs[i], user, ctx, uid, env);
    return results;
  } finally {
    closeScope(outer);
  }
}

const constant = (result: FlagEvaluation): FlagProgram => ({ evaluate: () => result, explain: () => result, enabled: () => result.enabled });

function compileProgram(flag: FlagDefinition, pool: ConditionPool): FlagProgram {
  const onOff = compileOnOff(flag, pool);
  return isTypedFlag(flag) ? compileTyped(flag, onOff, pool) : onOff;
}

const VARIATION_REASONS: readonly VariationReason[] = ['rule', 'rule_split', 'split', 'default'];
const REASON_COUNT = VARIATION_REASONS.length;

/**
 * A typed flag: the boolean program decides on or off, then the variation is chosen as flag.ts's withVariation does.
 * `evaluate` answers shared frozen objects: one per off answer, and one per (on reason, variation reason, variation),
 * made on first use. A variation is chosen as a code, variation index * REASON_COUNT + variation reason index.
 */
function compileTyped(flag: FlagDefinition, onOff: FlagProgram, pool: ConditionPool): FlagProgram {
  const variations = flag.variations as FlagVariation[];
  const indexOf = (key: unknown): number => (typeof key === 'string' ? variations.findIndex((v) => v.key === key) : -1);
  // The hash state of `split:<flag key>:` is computed here once; every split of the flag reads the same bucket.
  const bucketOf = bucketerFor(splitSalt(flag.key));
  // A split as pickSplit lays it out: the exclusive upper bucket of each entry (splitUppers) and the variation index
  // it serves, so that a pick is one hash and a scan of integers.
  const compileSplit = (split: SplitEntry[]) => ({ uppers: splitUppers(split), targets: Int32Array.from(split, (e) => indexOf(e.variation)) });
  type Split = ReturnType<typeof compileSplit>;
  const pick = ({ uppers, targets }: Split, user: BucketUnit): number => {
    const bucket = bucketOf(user);
    for (let i = 0; i < uppers.length; i++) if (bucket < uppers[i]) return targets[i];
    return -1;
  };
  const code = (index: number, reason: number) => (index < 0 ? -1 : index * REASON_COUNT + reason);

  const rules = (Array.isArray(flag.variation_rules) ? flag.variation_rules : []).map((rule) => {
    const targeting = rule.targeting_rules;
    let test: (ctx: Ctx, uid: ImplicitUserId, env: EvaluationEnv) => boolean;
    if (!hasTargetingRules(targeting)) test = () => true;
    else if (!isRuleSetShape(targeting)) test = () => false;
    else {
      const compiled = compileRules(targeting, pool);
      const free = segmentFreeMatcher(compiled);
      test = free ?? ((ctx, uid, env) => {
        try {
          return runRules(compiled, ctx, uid, env, false, null);
        } catch {
          return false;
        }
      });
    }
    return { test, variation: indexOf(rule.variation), split: Array.isArray(rule.split) ? compileSplit(rule.split) : null };
  });
  const flagSplit = Array.isArray(flag.variation_split) ? compileSplit(flag.variation_split) : null;
  const defaultIndex = indexOf(flag.default_variation);

  const choose = (user: BucketUnit, ctx: Ctx, uid: ImplicitUserId, env: EvaluationEnv): number => {
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i];
      if (!rule.test(ctx, uid, env)) continue;
      return rule.split === null ? code(rule.variation, 0) : code(pick(rule.split, user), 1);
    }
    return flagSplit !== null ? code(pick(flagSplit, user), 2) : code(defaultIndex, 3);
  };
  const withCode = (answer: FlagEvaluation, c: number): FlagEvaluation => {
    if (c < 0) return answer;
    const v = variations[(c / REASON_COUNT) | 0];
    return { ...answer, variation: v.key, value: v.value, variation_reason: VARIATION_REASONS[c % REASON_COUNT] };
  };
  const offIndex = indexOf(flag.off_variation);
  const offOf = (answer: FlagEvaluation): FlagEvaluation =>
    offIndex < 0 ? { ...answer, variation_reason: 'off' } : { ...answer, variation: variations[offIndex].key, value: variations[offIndex].value, variation_reason: 'off' };
  // The off answers of the boolean program's shared answers, looked up by identity (no per-call allocation).
  const [offDisabled, offError, offMiss, offRolledOut] = [DISABLED, ERROR, TARGETING_MISS, ROLLED_OUT].map((a) => Object.freeze(offOf(a)));
  const offAnswer = (answer: FlagEvaluation): FlagEvaluation =>
    answer === ROLLED_OUT ? offRolledOut : answer === TARGETING_MISS ? offMiss : answer === DISABLED ? offDisabled : answer === ERROR ? offError : offOf(answer);
  const onAnswers = [new Array<FlagEvaluation>(variations.length * REASON_COUNT), new Array<FlagEvaluation>(variations.length * REASON_COUNT)];

  const offVariation = offIndex < 0 ? undefined : variations[offIndex];
  return {
    enabled: onOff.enabled,
    serve(user, ctx, uid, env) {
      if (!onOff.enabled(user, ctx, uid, env)) return offVariation;
      const c = choose(user, ctx, uid, env);
      return c < 0 ? undefined : variations[(c / REASON_COUNT) | 0];
    },
    evaluate(user, ctx, uid, env) {
      const answer = onOff.evaluate(user, ctx, uid, env);
      if (!answer.enabled) return offAnswer(answer);
      const c = choose(user, ctx, uid, env);
      if (c < 0) return answer;
      const table = onAnswers[answer === TARGETING_MATCH ? 0 : 1];
      return (table[c] ??= Object.freeze(withCode(answer, c)));
    },
    explain(user, ctx, uid, env) {
      const answer = onOff.explain(user, ctx, uid, env);
      return answer.enabled ? withCode(answer, choose(user, ctx, uid, env)) : offOf(answer);
    },
  };
}

function compileOnOff(flag: FlagDefinition, pool: ConditionPool): FlagProgram {
  if (flag.is_active !== true || flag.status === 'archived') return constant(DISABLED);
  const pct = flag.rollout_percentage === null || flag.rollout_percentage === undefined ? 100 : flag.rollout_percentage;
  const buckets = percentageToBuckets(pct);
  const bucketOf = bucketerFor(flagSalt(flag.key));
  // inRollout(salt, userId, pct); the hash is skipped when the percentage decides alone (0 % or 100 %).
  const rolledIn = (user: BucketUnit): boolean => buckets >= BUCKET_COUNT || (buckets > 0 && bucketOf(user) < buckets);

  const rules = flag.targeting_rules;
  if (!hasTargetingRules(rules)) {
    const byRollout = (user: BucketUnit) => (rolledIn(user) ? ROLLED_IN : ROLLED_OUT);
    return { evaluate: byRollout, explain: byRollout, enabled: rolledIn };
  }
  if (!isRuleSetShape(rules)) return constant(TARGETING_MISS);
  const compiled = compileRules(rules, pool);
  const exhaustive = compiled.segmentIds.length > 0;
  const explain = (user: BucketUnit, ctx: Ctx, uid: ImplicitUserId, env: EvaluationEnv): FlagEvaluation => {
    try {
      const matchedConditions: string[] = [];
      if (!runRules(compiled, ctx, uid, env, true, matchedConditions)) return TARGETING_MISS;
      const extra = matchedConditions.length > 0 ? { rule: describeRule(matchedConditions) } : {};
      return rolledIn(user) ? { enabled: true, reason: 'targeting_match', ...extra } : { enabled: false, reason: 'rollout', ...extra };
    } catch {
      return ERROR;
    }
  };
  // Most rule sets name no segment: nothing can throw, and no environment is read.
  const matches = segmentFreeMatcher(compiled);
  if (matches !== null) {
    return {
      evaluate: (user, ctx, uid) => (!matches(ctx, uid) ? TARGETING_MISS : rolledIn(user) ? TARGETING_MATCH : ROLLED_OUT),
      explain,
      enabled: (user, ctx, uid) => rolledIn(user) && matches(ctx, uid),
    };
  }
  const match = (ctx: Ctx, uid: ImplicitUserId, env: EvaluationEnv): boolean | undefined => {
    try {
      return runRules(compiled, ctx, uid, env, exhaustive, null);
    } catch {
      // SegmentError (missing / invalid segment) or RegexLimitError, as evaluateFlag.
      return undefined;
    }
  };
  return {
    explain,
    enabled: (user, ctx, uid, env) => rolledIn(user) && match(ctx, uid, env) === true,
    evaluate(user, ctx, uid, env) {
      const matched = match(ctx, uid, env);
      return matched === undefined ? ERROR : !matched ? TARGETING_MISS : rolledIn(user) ? TARGETING_MATCH : ROLLED_OUT;
    },
  };
}

/** A ruleset's flags compiled for evaluation: what the service's snapshot and the SDK's ruleset both hold. */
export interface CompiledFlagSet {
  /** Every flag, in the order given (archived ones answer `disabled`). */
  flags: FlagEvaluator[];
  /** The indexes of the flags that are not archived: what a user's whole-set evaluation answers for. */
  liveIndexes: number[];
  /** The live flags compiled together, in `liveIndexes` order (flags[liveIndexes[i]] is live.flags[i]). */
  live: FlagSetEvaluator;
}

/**
 * THE flag compiler of a ruleset, for the service and the SDK alike: the live flags (not archived) compiled together,
 * sharing repeated attributes and conditions; the archived ones alone (they answer `disabled`).
 */
export function compileFlagSet(definitions: readonly FlagDefinition[]): CompiledFlagSet {
  const liveIndexes = definitions.flatMap((d, i) => (d.status === 'archived' ? [] : [i]));
  const live = compileFlags(liveIndexes.map((i) => definitions[i]));
  let next = 0;
  const flags = definitions.map((d) => (d.status === 'archived' ? compileFlag(d) : live.flags[next++]));
  return { flags, liveIndexes, live };
}

/**
 * A flag definition from a flag as a ruleset carries it (the service's rows mapped to it, GET /sdk/ruleset's
 * `flags[]`): the fields evaluation reads, typed fields only when the flag has them.
 */
export function flagDefinitionOf(flag: FlagDefinition): FlagDefinition {
  const definition: FlagDefinition = {
    key: flag.key,
    is_active: flag.is_active,
    status: flag.status,
    rollout_percentage: flag.rollout_percentage,
    targeting_rules: flag.targeting_rules ?? null,
  };
  if (flag.value_type === undefined || flag.value_type === null || flag.value_type === 'boolean') return definition;
  return {
    ...definition,
    value_type: flag.value_type,
    variations: flag.variations ?? null,
    default_variation: flag.default_variation ?? null,
    off_variation: flag.off_variation ?? null,
    variation_rules: flag.variation_rules ?? null,
    variation_split: flag.variation_split ?? null,
  };
}
