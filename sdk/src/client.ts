import { ClientCore } from './core.js';
import { backoffMs, sleep, UpliftError, type FetchLike } from './http.js';
import { changedFlagKeys, compileRuleset, type CompiledRuleset } from './ruleset.js';
import { SseParser, type SseEvent } from './sse.js';
import type { Assignment, Attributes, FlagEvaluation, Ruleset, TrackOptions, ValueDetails } from './types.js';

export interface UpliftOptions {
  /** The service's origin, e.g. `https://uplift.example.com` (the SDK adds `/api/v1/...`). */
  baseUrl: string;
  /** An API key with the `sdk:ruleset` scope. */
  apiKey: string;
  /** A ruleset to evaluate at once (parsed or JSON text), e.g. saved from GET /api/v1/sdk/ruleset at build time. */
  bootstrap?: Ruleset | string;
  /** How the ruleset follows changes: `stream` (default, Server-Sent Events), `poll` (every pollSeconds) or `off`. */
  updates?: 'stream' | 'poll' | 'off';
  /** Polling interval for `updates: "poll"` (default 30, at least 1). */
  pollSeconds?: number;
  /** A fetch implementation (default: the global one). */
  fetch?: FetchLike;
}

const EMPTY: Attributes = Object.freeze({}) as Attributes;

/** The flag value type a default value reads. */
function typeOfValue(value: unknown): 'boolean' | 'string' | 'number' | 'json' | undefined {
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'object':
      return value === null ? undefined : 'json';
    default:
      return undefined;
  }
}
const NOT_FOUND: FlagEvaluation = Object.freeze({ enabled: false, reason: 'not_found' });
/** Reconnect when the stream has sent nothing (not even a heartbeat) for this many heartbeat periods. */
const STREAM_IDLE_HEARTBEATS = 3;
const DEFAULT_HEARTBEAT_SECONDS = 15;

interface StreamEnvelope {
  version: string;
  heartbeat_seconds?: number;
  ruleset?: unknown;
}

/** The 401/403 answers no retry will change (wrong key, missing scope): updates stop and ready() rejects. */
const isFatal = (error: unknown) => error instanceof UpliftError && (error.status === 401 || error.status === 403);

/**
 * Uplift in server mode: flags evaluated in this process from the ruleset (downloaded with its ETag, then kept
 * current by the stream or by polling), experiment assignment through the API, tracking batched in the background.
 * Evaluation is synchronous and never touches the network; when the service is unreachable the last good ruleset
 * keeps answering.
 */
export class Uplift extends ClientCore {
  private current: CompiledRuleset | undefined;
  private readonly readyPromise: Promise<void>;
  private resolveReady!: () => void;
  private rejectReady!: (error: Error) => void;

  constructor(options: UpliftOptions) {
    super(options);
    const updates = options.updates ?? 'stream';
    if (!['stream', 'poll', 'off'].includes(updates)) throw new TypeError('updates must be "stream", "poll" or "off"');
    const pollSeconds = options.pollSeconds ?? 30;
    if (!(pollSeconds >= 1)) throw new TypeError('pollSeconds must be at least 1');
    this.readyPromise = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    // Whoever never calls ready() must not see an unhandled rejection.
    this.readyPromise.catch(() => undefined);
    if (options.bootstrap !== undefined) this.apply(compileRuleset(options.bootstrap));
    this.background = updates === 'off' && options.bootstrap !== undefined ? Promise.resolve() : this.follow(updates, pollSeconds * 1000);
  }

  /** Resolves once a ruleset is held (at once with bootstrap); rejects when the API key is refused. */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  /** The version (ETag value) of the ruleset in use; undefined before the first download or with a bootstrap only. */
  get version(): string | undefined {
    return this.current?.version;
  }

  isEnabled(flagKey: string, userId: string, attributes?: Attributes): boolean {
    const current = this.current;
    const flag = current?.byKey.get(flagKey);
    return flag !== undefined && flag.evaluate(userId, attributes ?? EMPTY, current!.env).enabled;
  }

  /** What POST /feature-flags/evaluate/{flag_key} answers (without the key), computed locally. */
  evaluate(flagKey: string, userId: string, attributes?: Attributes): FlagEvaluation {
    const current = this.current;
    const flag = current?.byKey.get(flagKey);
    return flag === undefined ? NOT_FOUND : flag.explain(userId, attributes ?? EMPTY, current!.env);
  }

  /**
   * The value a flag serves this user, or `defaultValue` when it serves none: the flag is unknown, off without an
   * off_variation, cannot be evaluated here, or its value is not of the default's type (a string default reads a
   * string flag, a number a number flag, an object or array a json flag, a boolean a boolean flag's on/off).
   */
  getValue<T>(flagKey: string, userId: string, defaultValue: T, attributes?: Attributes): T {
    // getDetails(...).value without building the details (the hot path of typed flags).
    const current = this.current;
    const entry = current?.valueByKey.get(flagKey);
    if (entry === undefined) return defaultValue;
    const type = entry.type;
    if (type !== typeOfValue(defaultValue)) return defaultValue;
    const { flag } = entry;
    if (type === 'boolean' || flag.serve === undefined) {
      const evaluation = flag.evaluate(userId, attributes ?? EMPTY, current!.env);
      if (type === 'boolean') return evaluation.reason === 'error' ? defaultValue : (evaluation.enabled as T);
      return evaluation.variation === undefined ? defaultValue : (evaluation.value as T);
    }
    const served = flag.serve(userId, attributes ?? EMPTY, current!.env);
    return served === undefined ? defaultValue : (served.value as T);
  }

  /** getValue with the variation served and the reason (see ValueDetails). */
  getDetails<T>(flagKey: string, userId: string, defaultValue: T, attributes?: Attributes): ValueDetails<T> {
    const current = this.current;
    const entry = current?.valueByKey.get(flagKey);
    if (entry === undefined) return { value: defaultValue, reason: 'not_found', is_default: true };
    const type = entry.type;
    if (type !== typeOfValue(defaultValue)) return { value: defaultValue, reason: 'type_mismatch', is_default: true };
    const evaluation = entry.flag.evaluate(userId, attributes ?? EMPTY, current!.env);
    if (type === 'boolean') {
      if (evaluation.reason === 'error') return { value: defaultValue, reason: 'error', is_default: true };
      return { value: evaluation.enabled as T, variation: evaluation.enabled ? 'on' : 'off', reason: evaluation.reason, is_default: false };
    }
    const { variation, variation_reason } = evaluation;
    if (variation === undefined) return { value: defaultValue, reason: evaluation.reason, variation_reason, is_default: true };
    return { value: evaluation.value as T, variation, reason: evaluation.reason, variation_reason, is_default: false };
  }

  /** Every flag that is not archived, on or off: what GET /feature-flags/user/{user_id} answers. */
  allEnabled(userId: string, attributes?: Attributes): Record<string, boolean> {
    const current = this.current;
    const result: Record<string, boolean> = {};
    if (!current) return result;
    const enabled = current.live.enabledAll(userId, attributes ?? EMPTY, current.env);
    const keys = current.liveKeys;
    for (let i = 0; i < keys.length; i++) result[keys[i]] = enabled[i];
    return result;
  }

  /** The user's variant (POST /tracking/assign); an assigned user's answer is kept, so later calls cost nothing. */
  assign(experimentKey: string, userId: string, context?: Attributes): Promise<Assignment> {
    return this.assigner.assign(experimentKey, userId, context);
  }

  /** Queues an event; it is sent in a batch shortly after (see Tracker). Never throws, never waits. */
  track(eventType: string, userId: string, options?: TrackOptions): void {
    this.tracker.track(eventType, userId, options);
  }

  private apply(next: CompiledRuleset): void {
    const previous = this.current;
    this.current = next;
    this.resolveReady();
    this.emit({ type: 'ruleset', version: next.version, changed: changedFlagKeys(previous?.ruleset, next.ruleset) });
  }

  /** Parses and applies a ruleset; one that cannot be used is reported and the last good one stays. */
  private accept(text: string | unknown, version: string | undefined): void {
    try {
      this.apply(compileRuleset(text, version));
    } catch (error) {
      this.emit({ type: 'error', error: error as Error });
    }
  }

  /** GET /sdk/ruleset, revalidating the version held (304: nothing to do). */
  private async download(): Promise<void> {
    const headers: Record<string, string> = {};
    if (this.current?.version) headers['If-None-Match'] = `"${this.current.version}"`;
    const res = await this.http.send('GET', '/sdk/ruleset', { headers, signal: this.stop.signal });
    if (res.status === 304) return;
    const etag = res.headers.get('etag')?.replace(/^W\//, '').replace(/"/g, '');
    this.accept(await res.text(), etag);
  }

  private async follow(updates: 'stream' | 'poll' | 'off', pollMs: number): Promise<void> {
    try {
      await this.untilDownloaded();
      if (updates === 'stream') await this.stream(pollMs);
      else if (updates === 'poll') await this.poll(pollMs);
    } catch (error) {
      if (this.stop.signal.aborted) return;
      this.rejectReady(error as Error);
      this.emit({ type: 'error', error: error as Error });
    }
  }

  /** The first download, retried with backoff until it succeeds, is refused for good, or the client closes. */
  private async untilDownloaded(): Promise<void> {
    for (let attempt = 0; !this.stop.signal.aborted; attempt++) {
      try {
        await this.download();
        if (this.current) return;
      } catch (error) {
        if (isFatal(error)) throw error;
        if (!this.stop.signal.aborted) this.emit({ type: 'error', error: error as Error });
        await sleep(backoffMs(attempt, error), this.stop.signal);
        continue;
      }
      await sleep(backoffMs(attempt), this.stop.signal);
    }
  }

  private async poll(pollMs: number): Promise<void> {
    for (;;) {
      await sleep(pollMs, this.stop.signal);
      if (this.stop.signal.aborted) return;
      try {
        await this.download();
      } catch (error) {
        if (isFatal(error)) throw error;
        if (!this.stop.signal.aborted) this.emit({ type: 'error', error: error as Error });
      }
    }
  }

  /**
   * Follows GET /sdk/ruleset/stream, reconnecting with backoff (Last-Event-ID: the version held, so the service
   * sends a ruleset only when it differs). A service without the stream (404) is polled instead.
   */
  private async stream(pollMs: number): Promise<void> {
    for (let attempt = 0; !this.stop.signal.aborted; ) {
      let error: unknown;
      try {
        if (await this.readStream()) attempt = 0;
      } catch (e) {
        if (this.stop.signal.aborted) return;
        if (isFatal(e)) throw e;
        if (e instanceof UpliftError && e.status === 404) return this.poll(pollMs);
        error = e;
        this.emit({ type: 'error', error: e as Error });
      }
      await sleep(backoffMs(attempt++, error), this.stop.signal);
    }
  }

  /** One connection; resolves true when it delivered at least one event before ending. */
  private async readStream(): Promise<boolean> {
    const connection = new AbortController();
    const abort = () => connection.abort();
    this.stop.signal.addEventListener('abort', abort, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    let idleMs = STREAM_IDLE_HEARTBEATS * DEFAULT_HEARTBEAT_SECONDS * 1000;
    const resetIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(abort, idleMs);
      (idle as { unref?: () => void }).unref?.();
    };
    let delivered = false;
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream' };
      if (this.current?.version) headers['Last-Event-ID'] = this.current.version;
      resetIdle();
      const res = await this.http.send('GET', '/sdk/ruleset/stream', { headers, signal: connection.signal });
      if (!res.body) throw new Error('the ruleset stream has no body');
      const decoder = new TextDecoder();
      const parser = new SseParser((event) => {
        delivered = true;
        const seconds = this.onStreamEvent(event);
        if (seconds) idleMs = STREAM_IDLE_HEARTBEATS * seconds * 1000;
      });
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.push(decoder.decode(value, { stream: true }));
        resetIdle();
      }
    } catch (error) {
      // Our own abort (idle or close) ends the connection quietly; the caller reconnects or stops.
      if (!connection.signal.aborted) throw error;
    } finally {
      clearTimeout(idle);
      this.stop.signal.removeEventListener('abort', abort);
      connection.abort();
    }
    return delivered;
  }

  /** Applies one stream event; returns the heartbeat period it announces. */
  private onStreamEvent(event: SseEvent): number | undefined {
    let envelope: StreamEnvelope;
    try {
      envelope = JSON.parse(event.data) as StreamEnvelope;
    } catch {
      this.emit({ type: 'error', error: new Error('unreadable ruleset stream event') });
      return undefined;
    }
    if (event.event === 'ruleset' && envelope.version !== this.current?.version) this.accept(envelope.ruleset, envelope.version);
    // `version` names the ruleset current on the service; one we do not hold is downloaded.
    else if (event.event === 'version' && envelope.version !== this.current?.version) {
      this.download().catch((error: Error) => this.emit({ type: 'error', error }));
    }
    return typeof envelope.heartbeat_seconds === 'number' && envelope.heartbeat_seconds > 0 ? envelope.heartbeat_seconds : undefined;
  }
}
