import { createHash } from 'node:crypto';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { report, telemetry } from '../../platform/telemetry.js';
import { checkTargetingContext, hasTargetingRules, isTypedFlag, type FlagDefinition, type FlagEvaluation } from '../../targeting/index.js';
import { KEYS_CHANGED } from '../api-keys/service.js';
import { flagIdListSegmentIds, membershipSubject, type CompiledFlag, type RulesetSnapshot } from '../feature-flags/ruleset.js';
import { matchesIfNoneMatch, versionOf, type SdkService } from '../sdk/service.js';
import type { SegmentsService } from '../segments/service.js';
import { ACCOUNTS_CHANGED } from '../users/service.js';
import { needsTargetingKey, ofrepAnswer, type OfrepFailure, type OfrepFlagFacts } from './answers.js';
import { createStreamTokens } from './stream-token.js';

/** The body the JSON parser of these routes hands over when the text is not JSON (answered PARSE_ERROR). */
export const UNPARSABLE: unique symbol = Symbol('unparsable body');

export const FLAG_NOT_FOUND_DETAILS = 'Flag not found';
export const TARGETING_KEY_MISSING_DETAILS = 'This flag needs context.targetingKey (the user id) to be evaluated';
export const PARSE_ERROR_DETAILS = 'The body must be a JSON object: {"context": {...}}';
export const CONTEXT_NOT_OBJECT = 'context must be a JSON object';
export const TARGETING_KEY_NOT_STRING = 'context.targetingKey must be a string';
export const STREAM_PATH = '/ofrep/v1/event-stream';

/** An OFREP answer, already serialised (the bulk answer is hashed for its ETag as sent). */
export interface OfrepReply {
  status: 200 | 304 | 400 | 404;
  json?: string;
  etag?: string;
}

interface Request {
  /** The user id: `context.targetingKey`; undefined when absent or empty. */
  userId: string | undefined;
  /** The rest of the context: what the targeting rules read. */
  context: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{context}` read as OFREP defines it, held to the evaluate routes' context limits; or the failure to answer. */
export function readRequest(body: unknown): Request | OfrepFailure {
  if (body === UNPARSABLE || (body !== undefined && !isObject(body))) return { errorCode: 'PARSE_ERROR', errorDetails: PARSE_ERROR_DETAILS };
  const raw = body?.context ?? {};
  if (!isObject(raw)) return { errorCode: 'INVALID_CONTEXT', errorDetails: CONTEXT_NOT_OBJECT };
  const { targetingKey, ...context } = raw;
  if (targetingKey !== undefined && typeof targetingKey !== 'string') return { errorCode: 'INVALID_CONTEXT', errorDetails: TARGETING_KEY_NOT_STRING };
  const problem = checkTargetingContext(context);
  if (problem) return { errorCode: 'INVALID_CONTEXT', errorDetails: problem };
  return { userId: targetingKey === '' ? undefined : targetingKey, context };
}

const failed = (r: Request | OfrepFailure): r is OfrepFailure => 'errorCode' in r;

function hasSplits(definition: FlagDefinition): boolean {
  return Array.isArray(definition.variation_split) || (definition.variation_rules ?? []).some((rule) => Array.isArray(rule.split));
}

function facts(flag: CompiledFlag): OfrepFlagFacts & { needsKey: boolean } {
  const { definition } = flag;
  const typed = isTypedFlag(definition);
  const base = {
    rolloutPercentage: flag.row.rolloutPercentage,
    hasRules: hasTargetingRules(definition.targeting_rules),
    typed,
    hasSplits: typed && hasSplits(definition),
    hasVariationRules: typed && (definition.variation_rules ?? []).length > 0,
  };
  return { ...base, needsKey: needsTargetingKey({ ...base, isActive: flag.definition.is_active, idListSegments: flag.idListSegmentIds.length }) };
}

/** One flag's answer as JSON text: `{"key":…,` already written by the caller. */
function answerJson(flag: OfrepFlagFacts, evaluation: FlagEvaluation, metadata: Record<string, string>): string {
  const answer = ofrepAnswer(flag, evaluation);
  return JSON.stringify({ ...answer, metadata: 'errorCode' in answer ? undefined : metadata }).slice(1);
}

/**
 * The bulk answer's parts prepared once per ruleset snapshot: each live flag's key and what it needs, and its answer
 * JSON per Uplift outcome (a flag has at most a handful), so a bulk evaluation concatenates prepared text.
 */
interface BulkPlan {
  heads: string[];
  facts: Array<OfrepFlagFacts & { needsKey: boolean }>;
  answers: Array<Map<string, string>>;
  missingKey: string[];
}

function bulkPlan(snapshot: RulesetSnapshot): BulkPlan {
  const heads = snapshot.live.map((f, i) => `${i === 0 ? '' : ','}{"key":${JSON.stringify(f.row.key)},`);
  return {
    heads,
    facts: snapshot.live.map(facts),
    answers: snapshot.live.map(() => new Map()),
    missingKey: snapshot.live.map(() => JSON.stringify({ errorCode: 'TARGETING_KEY_MISSING', errorDetails: TARGETING_KEY_MISSING_DETAILS }).slice(1)),
  };
}

export interface OfrepDeps {
  flags: { snapshot(): Promise<RulesetSnapshot> };
  segments: Pick<SegmentsService, 'membershipEnv'>;
  sdk: Pick<SdkService, 'watch' | 'ruleset'>;
  apiKeys: { isUsable(keyId: string): Promise<boolean> };
  bus: Bus;
  clock: Clock;
  secretKey: string;
}

export interface StreamWatcher {
  keyId: string;
  /** A committed flag or segment change: the new ruleset version. */
  changed(version: string): void;
  /** The key was deleted or its owner can no longer use it. */
  revoked(): void;
}

export type OfrepService = ReturnType<typeof createOfrepService>;

export function createOfrepService(deps: OfrepDeps) {
  const plans = new WeakMap<RulesetSnapshot, BulkPlan>();
  const tokens = createStreamTokens(deps.secretKey, deps.clock);
  const watchers = new Set<StreamWatcher>();
  let stopWatchingRuleset: (() => void) | undefined;

  /** A key or account change in any process: streams whose key no longer authenticates end (one check per key). */
  async function recheckKeys(): Promise<void> {
    const byKey = new Map<string, StreamWatcher[]>();
    for (const w of watchers) byKey.set(w.keyId, [...(byKey.get(w.keyId) ?? []), w]);
    await Promise.all(
      [...byKey].map(async ([keyId, list]) => {
        if (!(await deps.apiKeys.isUsable(keyId).catch(() => true))) for (const w of list) w.revoked();
      }),
    );
  }
  deps.bus.subscribe(KEYS_CHANGED, () => void recheckKeys());
  deps.bus.subscribe(ACCOUNTS_CHANGED, () => void recheckKeys());

  const failure = (status: 400 | 404, key: string | undefined, f: OfrepFailure): OfrepReply => ({
    status,
    json: JSON.stringify(key === undefined ? f : { key, ...f }),
  });

  async function streamJson(keyId: string): Promise<string> {
    const token = await tokens.issue(keyId);
    return JSON.stringify([{ type: 'sse', endpoint: { requestUri: `${STREAM_PATH}?token=${token}` } }]);
  }

  return {
    /** POST /ofrep/v1/evaluate/flags/{key}. */
    async evaluate(key: string, body: unknown): Promise<OfrepReply> {
      const request = readRequest(body);
      if (failed(request)) return failure(400, key, request);
      const snapshot = await deps.flags.snapshot();
      const flag = snapshot.byKey.get(key);
      if (!flag || flag.row.status === 'ARCHIVED') return failure(404, key, { errorCode: 'FLAG_NOT_FOUND', errorDetails: FLAG_NOT_FOUND_DETAILS });
      const flagFacts = facts(flag);
      if (flagFacts.needsKey && request.userId === undefined) return failure(400, key, { errorCode: 'TARGETING_KEY_MISSING', errorDetails: TARGETING_KEY_MISSING_DETAILS });
      const userId = request.userId ?? '';
      const env = await deps.segments.membershipEnv(snapshot.segments, flagIdListSegmentIds(flag), membershipSubject(userId, request.context), snapshot.withoutMembers);
      report(telemetry.flagsEvaluated, { flags: 1 });
      const evaluation = flag.evaluator.explain(userId, request.context, env);
      const answer = ofrepAnswer(flagFacts, evaluation);
      if ('errorCode' in answer) return failure(400, key, answer);
      const metadata = { upliftReason: evaluation.reason, ...(evaluation.rule ? { rule: evaluation.rule } : {}) };
      return { status: 200, json: JSON.stringify({ key, ...answer, metadata }) };
    },

    /**
     * POST /ofrep/v1/evaluate/flags: every live flag for this context, the event stream that announces changes, and
     * a strong ETag of exactly the bytes answered (so 304 means this context's answer, stream URL included, is the same).
     */
    async evaluateAll(keyId: string, body: unknown, ifNoneMatch: string | undefined): Promise<OfrepReply> {
      const request = readRequest(body);
      if (failed(request)) return failure(400, undefined, request);
      const snapshot = await deps.flags.snapshot();
      let plan = plans.get(snapshot);
      if (!plan) plans.set(snapshot, (plan = bulkPlan(snapshot)));
      const userId = request.userId ?? '';
      // Without targetingKey the flags naming id-list segments answer TARGETING_KEY_MISSING: no membership to look up.
      const subject = request.userId === undefined ? undefined : membershipSubject(userId, request.context);
      const env = await deps.segments.membershipEnv(snapshot.segments, snapshot.liveIdListSegmentIds, subject, snapshot.withoutMembers);
      const evaluations = snapshot.liveEvaluator.evaluateAll(userId, request.context, env);
      report(telemetry.flagsEvaluated, { flags: evaluations.length });
      let json = '{"flags":[';
      for (let i = 0; i < evaluations.length; i++) {
        let answer: string | undefined;
        if (request.userId === undefined && plan.facts[i].needsKey) answer = plan.missingKey[i];
        else {
          const ev = evaluations[i];
          // Within a snapshot, a flag's answer depends on these alone (a variation's value is fixed).
          const outcome = `${ev.enabled}|${ev.reason}|${ev.variation_reason ?? ''}|${ev.variation ?? ''}`;
          answer = plan.answers[i].get(outcome);
          if (answer === undefined) plan.answers[i].set(outcome, (answer = answerJson(plan.facts[i], ev, { upliftReason: ev.reason })));
        }
        json += plan.heads[i] + answer;
      }
      json += `],"eventStreams":${await streamJson(keyId)}}`;
      const etag = `"${createHash('sha1').update(json).digest('base64url')}"`;
      if (matchesIfNoneMatch(ifNoneMatch, etag)) return { status: 304, etag };
      return { status: 200, json, etag };
    },

    /** The API key id a stream token names, if the token is valid and the key still authenticates. */
    async streamKey(token: string): Promise<string | undefined> {
      const keyId = await tokens.verify(token);
      return keyId !== undefined && (await deps.apiKeys.isUsable(keyId)) ? keyId : undefined;
    },

    isUsable: (keyId: string) => deps.apiKeys.isUsable(keyId),

    /** The current ruleset version: what stream event ids carry. */
    version: async () => versionOf(await deps.sdk.ruleset()),

    /** Calls the watcher after every committed flag or segment change and when its key is revoked; returns the stop. */
    watch(watcher: StreamWatcher): () => void {
      watchers.add(watcher);
      stopWatchingRuleset ??= deps.sdk.watch((body) => {
        const version = versionOf(body);
        for (const w of watchers) w.changed(version);
      });
      return () => {
        watchers.delete(watcher);
        if (watchers.size === 0) {
          stopWatchingRuleset?.();
          stopWatchingRuleset = undefined;
        }
      };
    },
  };
}
