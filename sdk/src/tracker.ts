import { backoffMs, isRetryable, sleep, type Http } from './http.js';
import type { Assignment, Attributes, TrackOptions } from './types.js';

/** Events per POST /tracking/batch (the route takes up to 1,000). */
export const TRACK_BATCH_SIZE = 100;
/** A partly filled batch is sent this long after its first event. */
export const TRACK_FLUSH_MS = 2000;
/** Events held while the service cannot take them; beyond this new events are dropped (and reported). */
export const TRACK_MAX_QUEUED = 10_000;
/** Tries per batch while closing: close() must end even when the service stays down. */
export const TRACK_CLOSE_ATTEMPTS = 3;
/** The longest wait between those tries, whatever Retry-After says. */
export const TRACK_CLOSE_MAX_WAIT_MS = 5000;

interface TrackEvent {
  event_type: string;
  user_id: string;
  experiment_key?: string;
  value?: number;
  metadata?: Record<string, unknown>;
}

/** The longest event type, user id or experiment key the service takes. */
export const TRACK_MAX_TEXT = 255;

/**
 * In the JSON text of an event, an escaped NUL or lone surrogate (JSON.stringify writes a lone surrogate as `\udXXX`
 * and a pair as the character itself), preceded by an even number of backslashes so that an escaped backslash
 * followed by `u0000` typed by the caller does not count. The service refuses both (422), for the whole batch.
 */
const UNSTORABLE_TEXT = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/**
 * Why the service would refuse an event, checked when it is tracked: the batch route refuses a whole batch (422) for
 * one invalid event, and an event JSON cannot carry would stall the queue, so such an event is reported and dropped
 * alone instead of taking the others with it.
 */
function refusal(event: TrackEvent): string | undefined {
  const text = (name: string, value: unknown) =>
    typeof value !== 'string' || value.length === 0 || value.length > TRACK_MAX_TEXT ? `${name} must be 1 to ${TRACK_MAX_TEXT} characters` : undefined;
  const wrong = text('the event type', event.event_type) ?? text('the user id', event.user_id)
    ?? (event.experiment_key === undefined ? undefined : text('the experiment key', event.experiment_key));
  if (wrong) return wrong;
  if (event.value !== undefined && !(typeof event.value === 'number' && Number.isFinite(event.value))) return 'the value must be a finite number';
  const metadata = event.metadata;
  if (metadata !== undefined && (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata))) return 'properties must be an object';
  let json: string;
  try {
    json = JSON.stringify(event);
  } catch (error) {
    return `it cannot be sent as JSON (${(error as Error).message})`;
  }
  return UNSTORABLE_TEXT.test(json) ? 'its text holds a NUL character or an unpaired surrogate' : undefined;
}

interface BatchAnswer {
  errors: Array<{ index: number; error: string }>;
}

/**
 * Tracking that never blocks the caller: `track` queues, batches go out by size or after TRACK_FLUSH_MS, one at a
 * time and in order. A batch refused with 429, 5xx or a network failure is retried with backoff and jitter
 * (honouring Retry-After) and stays at the head of the queue meanwhile; any other refusal, or events the service
 * lists as invalid, cannot succeed by retrying and are reported to `onError`, not retried.
 */
export class Tracker {
  private queue: TrackEvent[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<void> | undefined;
  private closing = false;
  /** Cuts a backoff wait short when close() starts (closing retries use short waits). */
  private readonly wake = new AbortController();

  constructor(
    private readonly http: Http,
    private readonly onError: (error: Error) => void,
  ) {}

  track(eventType: string, userId: string, options: TrackOptions = {}): void {
    if (this.closing) return this.onError(new Error('track() after close(): the event was not recorded'));
    const event: TrackEvent = { event_type: eventType, user_id: userId };
    if (options.experimentKey !== undefined) event.experiment_key = options.experimentKey;
    if (options.value !== undefined) event.value = options.value;
    if (options.properties !== undefined) event.metadata = options.properties;
    const refused = refusal(event);
    if (refused) return this.onError(new Error(`event not recorded: ${refused}`));
    // The head of the queue may be in flight, so a full queue refuses the new event rather than dropping old ones.
    if (this.queue.length >= TRACK_MAX_QUEUED) return this.onError(new Error(`tracking queue full (${TRACK_MAX_QUEUED} events): the event was dropped`));
    this.queue.push(event);
    if (this.running) return;
    if (this.queue.length >= TRACK_BATCH_SIZE) void this.pump();
    else this.schedule();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.pump(), TRACK_FLUSH_MS);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Sends everything queued; resolves when the queue is empty (or, closing, when retries are exhausted). */
  flush(): Promise<void> {
    return this.pump();
  }

  async close(): Promise<void> {
    this.closing = true;
    this.wake.abort();
    await this.pump();
  }

  private pump(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.running) {
      this.running = this.drain().finally(() => {
        this.running = undefined;
        // Events queued after the last batch left, while this drain was finishing.
        if (this.queue.length > 0 && !this.closing) this.schedule();
      });
    }
    return this.running;
  }

  private async drain(): Promise<void> {
    let attempt = 0;
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, TRACK_BATCH_SIZE);
      try {
        const answer = await this.http.json<BatchAnswer>('POST', '/tracking/batch', { events: batch });
        for (const e of answer.errors ?? []) this.onError(new Error(`event ${batch[e.index]?.event_type ?? e.index} refused: ${e.error}`));
      } catch (error) {
        if (isRetryable(error) && !(this.closing && attempt + 1 >= TRACK_CLOSE_ATTEMPTS)) {
          const wait = backoffMs(attempt++, error);
          await (this.closing ? sleep(Math.min(wait, TRACK_CLOSE_MAX_WAIT_MS)) : sleep(wait, this.wake.signal));
          continue;
        }
        this.onError(new Error(`${batch.length} event(s) not recorded: ${(error as Error).message}`));
      }
      attempt = 0;
      this.queue.splice(0, batch.length);
    }
  }
}

/** Assignment through POST /tracking/assign, each assigned user's variant kept per experiment (assignment is sticky). */
export class Assigner {
  private readonly cache = new Map<string, Promise<Assignment>>();
  static readonly MAX_CACHED = 10_000;

  constructor(private readonly http: Http) {}

  assign(experimentKey: string, userId: string, context?: Attributes): Promise<Assignment> {
    const key = `${experimentKey}\u0000${userId}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const body: Record<string, unknown> = { experiment_key: experimentKey, user_id: userId };
    if (context !== undefined) body.context = context;
    const pending = this.http.json<Assignment>('POST', '/tracking/assign', body);
    this.cache.set(key, pending);
    if (this.cache.size > Assigner.MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    // Only an assignment is sticky: an ineligible user (holdout, targeting...) may become eligible, and a failure is
    // not an answer; neither is kept.
    pending.then(
      (a) => {
        if (!a.assigned && this.cache.get(key) === pending) this.cache.delete(key);
      },
      () => {
        if (this.cache.get(key) === pending) this.cache.delete(key);
      },
    );
    return pending;
  }
}
