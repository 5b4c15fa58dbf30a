import { createHash } from 'node:crypto';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { report, telemetry } from '../../platform/telemetry.js';
import { checkParsedContext, checkTargetingContext, hasTargetingRules, isTypedFlag, type FlagDefinition, type FlagEvaluation } from '../../targeting/index.js';
import { KEYS_CHANGED } from '../api-keys/domain.js';
import { membershipSubject, type CompiledFlag, type RulesetSnapshot } from '../feature-flags/service.js';
import type { FlagsService } from '../feature-flags/service.js';
import { matchesIfNoneMatch, versionOf, type SdkService } from '../sdk/service.js';
import type { SegmentsService } from '../segments/service.js';
import { ACCOUNTS_CHANGED } from '../users/domain.js';
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

/**
 * `{context}` read as OFREP defines it, held to the evaluate routes' context limits; or the failure to answer. `source`
 * is the JSON text the body was parsed from, when known: a short one bounds the context's size without serialising it
 * again (checkParsedContext).
 */
export function readRequest(body: unknown, source?: string): Request | OfrepFailure {
  if (body === UNPARSABLE || (body !== undefined && !isObject(body))) return { errorCode: 'PARSE_ERROR', errorDetails: PARSE_ERROR_DETAILS };
  const raw = body?.context ?? {};
  if (!isObject(raw)) return { errorCode: 'INVALID_CONTEXT', errorDetails: CONTEXT_NOT_OBJECT };
  const { targetingKey, ...context } = raw;
  if (targetingKey !== undefined && typeof targetingKey !== 'string') return { errorCode: 'INVALID_CONTEXT', errorDetails: TARGETING_KEY_NOT_STRING };
  const problem = source === undefined ? checkTargetingContext(context) : checkParsedContext(source, context);
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

/**
 * A piece of the bulk answer's text with a 64-bit digest of it (two 32-bit halves of its SHA-1), computed once: the
 * ETag combines the digests of the pieces answered instead of hashing the whole answer on every request.
 */
interface Piece {
  text: string;
  h1: number;
  h2: number;
}

function piece(text: string): Piece {
  const digest = createHash('sha1').update(text).digest();
  return { text, h1: digest.readUInt32LE(0), h2: digest.readUInt32LE(4) };
}

/**
 * The ETag of a sequence of pieces: their digests mixed in order (two independent 32-bit lanes), so the same text
 * gives the same tag and any change of a piece, or of their order, a different one (a strong validator for these
 * bytes as long as no two distinct pieces share a 64-bit digest).
 */
function etagOf(pieces: readonly Piece[]): string {
  let a = 0x811c9dc5;
  let b = 0x2545f491;
  for (const p of pieces) {
    a = Math.imul(a ^ p.h1, 0x9e3779b1);
    a ^= a >>> 15;
    b = Math.imul(b ^ p.h2, 0x85ebca77);
    b ^= b >>> 13;
  }
  return `"${(a >>> 0).toString(36)}-${(b >>> 0).toString(36)}-${pieces.length}"`;
}

/** An Uplift outcome of a boolean flag as a small number (its answer depends on nothing else within a snapshot). */
const REASON_CODES: Record<FlagEvaluation['reason'], number> = { disabled: 0, targeting_match: 2, targeting_miss: 4, rollout: 6, error: 8 };

/**
 * The bulk answer's parts prepared once per ruleset snapshot: each live flag's key and what it needs, and its answer
 * (key included) per Uplift outcome, made on first use (a flag has a handful), so a bulk evaluation looks pieces up.
 */
interface BulkPlan {
  facts: Array<OfrepFlagFacts & { needsKey: boolean }>;
  answers: Array<Map<number | string, Piece>>;
  missingKey: Piece[];
}

function bulkPlan(snapshot: RulesetSnapshot): BulkPlan {
  return {
    facts: snapshot.live.map(facts),
    answers: snapshot.live.map(() => new Map()),
    missingKey: snapshot.live.map((f) => piece(JSON.stringify({ key: f.row.key, errorCode: 'TARGETING_KEY_MISSING', errorDetails: TARGETING_KEY_MISSING_DETAILS }))),
  };
}

/** The answer piece of live flag `i` for this evaluation, made once per outcome. */
function answerPiece(plan: BulkPlan, snapshot: RulesetSnapshot, i: number, ev: FlagEvaluation): Piece {
  // Within a snapshot a flag's answer depends on its outcome alone (a variation's value is fixed).
  const outcome = plan.facts[i].typed ? `${ev.enabled}|${ev.reason}|${ev.variation_reason ?? ''}|${ev.variation ?? ''}` : REASON_CODES[ev.reason] + (ev.enabled ? 1 : 0);
  let found = plan.answers[i].get(outcome);
  if (!found) {
    const answer = ofrepAnswer(plan.facts[i], ev);
    const metadata = 'errorCode' in answer ? undefined : { upliftReason: ev.reason };
    plan.answers[i].set(outcome, (found = piece(JSON.stringify({ key: snapshot.live[i].row.key, ...answer, metadata }))));
  }
  return found;
}

export interface OfrepDeps {
  flags: Pick<FlagsService, 'snapshot' | 'evaluateDetails'>;
  segments: Pick<SegmentsService, 'membershipEnv'>;
  sdk: Pick<SdkService, 'watch' | 'ruleset'>;
  apiKeys: { isUsable(keyId: string): Promise<boolean>; environmentOf(keyId: string): Promise<string | undefined> };
  bus: Bus;
  clock: Clock;
  secretKey: string;
}

export interface StreamWatcher {
  keyId: string;
  /** The key's environment: only a change there is announced. */
  environment: string;
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

  /**
   * The eventStreams entry for this key: the same piece while its token is (one per key per token window). Within a
   * window `tokens.issue` hands out the same promise, which identifies the piece made from it without waiting on it.
   */
  const streamPieces = new Map<string, { issued: Promise<string>; piece: Piece }>();
  function streamPiece(keyId: string): Piece | Promise<Piece> {
    const issued = tokens.issue(keyId);
    const cached = streamPieces.get(keyId);
    if (cached?.issued === issued) return cached.piece;
    return issued.then((token) => {
      const made = piece(JSON.stringify([{ type: 'sse', endpoint: { requestUri: `${STREAM_PATH}?token=${token}` } }]));
      if (streamPieces.size > 10_000) streamPieces.clear();
      streamPieces.set(keyId, { issued, piece: made });
      return made;
    });
  }

  return {
    /** POST /ofrep/v1/evaluate/flags/{key}. */
    async evaluate(key: string, body: unknown, environment?: string, source?: string): Promise<OfrepReply> {
      const request = readRequest(body, source);
      if (failed(request)) return failure(400, key, request);
      const snapshot = await deps.flags.snapshot(environment);
      const flag = snapshot.byKey.get(key);
      if (!flag || flag.row.status === 'ARCHIVED') return failure(404, key, { errorCode: 'FLAG_NOT_FOUND', errorDetails: FLAG_NOT_FOUND_DETAILS });
      const flagFacts = facts(flag);
      if (flagFacts.needsKey && request.userId === undefined) return failure(400, key, { errorCode: 'TARGETING_KEY_MISSING', errorDetails: TARGETING_KEY_MISSING_DETAILS });
      // The flags service's evaluation of one flag (value, variation, rule text); the context passed its limits above.
      const [evaluation] = await deps.flags.evaluateDetails(request.userId ?? '', request.context, ['body', 'context'], [key], environment);
      if (!evaluation) return failure(404, key, { errorCode: 'FLAG_NOT_FOUND', errorDetails: FLAG_NOT_FOUND_DETAILS });
      const answer = ofrepAnswer(flagFacts, evaluation);
      if ('errorCode' in answer) return failure(400, key, answer);
      const metadata = { upliftReason: evaluation.reason, ...(evaluation.rule ? { rule: evaluation.rule } : {}) };
      return { status: 200, json: JSON.stringify({ key, ...answer, metadata }) };
    },

    /**
     * POST /ofrep/v1/evaluate/flags: every live flag (the snapshot's compiled flag set, as the flags service's
     * evaluateDetails runs it, read here directly so that the answer text prepared for this snapshot matches it index by
     * index) for this context, the event stream that announces changes, and a strong ETag of exactly the bytes answered (so 304 means this context's answer, stream URL included, is the same).
     */
    async evaluateAll(keyId: string, body: unknown, ifNoneMatch: string | undefined, environment?: string, source?: string): Promise<OfrepReply> {
      const request = readRequest(body, source);
      if (failed(request)) return failure(400, undefined, request);
      const snapshot = await deps.flags.snapshot(environment);
      let plan = plans.get(snapshot);
      if (!plan) plans.set(snapshot, (plan = bulkPlan(snapshot)));
      const userId = request.userId ?? '';
      // Without targetingKey the flags naming id-list segments answer TARGETING_KEY_MISSING: no membership to look up.
      const subject = request.userId === undefined ? undefined : membershipSubject(userId, request.context);
      const env = await deps.segments.membershipEnv(snapshot.segments, snapshot.liveIdListSegmentIds, subject, snapshot.withoutMembers);
      const evaluations = snapshot.liveEvaluator.evaluateAll(userId, request.context, env);
      report(telemetry.flagsEvaluated, { flags: evaluations.length });
      const pieces: Piece[] = [];
      for (let i = 0; i < evaluations.length; i++) {
        pieces.push(request.userId === undefined && plan.facts[i].needsKey ? plan.missingKey[i] : answerPiece(plan, snapshot, i, evaluations[i]));
      }
      const stream = streamPiece(keyId);
      pieces.push(stream instanceof Promise ? await stream : stream);
      const etag = etagOf(pieces);
      if (matchesIfNoneMatch(ifNoneMatch, etag)) return { status: 304, etag };
      let json = '{"flags":[';
      for (let i = 0; i < pieces.length - 1; i++) json += (i === 0 ? '' : ',') + pieces[i].text;
      json += `],"eventStreams":${pieces[pieces.length - 1].text}}`;
      return { status: 200, json, etag };
    },

    /** The API key a stream token names with its environment, if the token is valid and the key still authenticates. */
    async streamKey(token: string): Promise<{ keyId: string; environment: string } | undefined> {
      const keyId = await tokens.verify(token);
      if (keyId === undefined || !(await deps.apiKeys.isUsable(keyId))) return undefined;
      const environment = await deps.apiKeys.environmentOf(keyId);
      return environment === undefined ? undefined : { keyId, environment };
    },

    isUsable: (keyId: string) => deps.apiKeys.isUsable(keyId),

    /** The current ruleset version: what stream event ids carry. */
    version: async (environment?: string) => versionOf(await deps.sdk.ruleset(environment)),

    /** Calls the watcher after every committed flag or segment change and when its key is revoked; returns the stop. */
    watch(watcher: StreamWatcher): () => void {
      watchers.add(watcher);
      const stopWatchingRuleset = deps.sdk.watch((body) => watcher.changed(versionOf(body)), watcher.environment);
      return () => {
        watchers.delete(watcher);
        stopWatchingRuleset();
      };
    },
  };
}
