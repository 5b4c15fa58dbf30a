/**
 * @uplift/sdk/browser: for code running on users' devices, which must not hold every flag's rules (they may name
 * customers, plans or internal cohorts). One user's flags come from GET /feature-flags/user/{user_id}, evaluated by
 * the service; assignment and tracking go through the same routes as the server client. Use an API key without the
 * `sdk:ruleset` scope here, and add the page's origin to the service's CORS_ORIGINS.
 */
import { ClientCore } from './core.js';
import { backoffMs, sleep, type FetchLike } from './http.js';
import type { Assignment, Attributes, TrackOptions } from './types.js';

export interface UpliftBrowserOptions {
  /** The service's origin, e.g. `https://uplift.example.com`. */
  baseUrl: string;
  apiKey: string;
  userId: string;
  attributes?: Attributes;
  /** Flags to answer with until the first download (e.g. rendered into the page by the server client's allEnabled). */
  bootstrap?: Record<string, boolean>;
  /** `poll` (default: reload the user's flags every pollSeconds) or `off`. */
  updates?: 'poll' | 'off';
  /** Default 60, at least 1. */
  pollSeconds?: number;
  fetch?: FetchLike;
}

export class UpliftBrowser extends ClientCore {
  private flags: Record<string, boolean>;
  private userId: string;
  private attributes: Attributes | undefined;
  private loaded: Promise<void>;
  /** Answers of loads started before the latest identify() are dropped. */
  private generation = 0;

  constructor(options: UpliftBrowserOptions) {
    super(options);
    if (typeof options.userId !== 'string' || options.userId === '') throw new TypeError('userId is required');
    const updates = options.updates ?? 'poll';
    if (updates !== 'poll' && updates !== 'off') throw new TypeError('updates must be "poll" or "off"');
    const pollSeconds = options.pollSeconds ?? 60;
    if (!(pollSeconds >= 1)) throw new TypeError('pollSeconds must be at least 1');
    this.userId = options.userId;
    this.attributes = options.attributes;
    this.flags = { ...options.bootstrap };
    const first = this.load();
    first.catch((error: Error) => this.emit({ type: 'error', error }));
    this.loaded = options.bootstrap === undefined ? first : Promise.resolve();
    this.background = updates === 'poll' ? this.poll(pollSeconds * 1000) : Promise.resolve();
  }

  /** Resolves once this user's flags are loaded (at once when bootstrapped); rejects when the first load fails. */
  ready(): Promise<void> {
    return this.loaded;
  }

  isEnabled(flagKey: string): boolean {
    return this.flags[flagKey] === true;
  }

  allEnabled(): Record<string, boolean> {
    return { ...this.flags };
  }

  /** Switches to another user (sign-in, sign-out) or new attributes, and loads their flags. */
  identify(userId: string, attributes?: Attributes): Promise<void> {
    this.userId = userId;
    this.attributes = attributes;
    this.loaded = this.load();
    return this.loaded;
  }

  assign(experimentKey: string, context?: Attributes): Promise<Assignment> {
    return this.assigner.assign(experimentKey, this.userId, context ?? this.attributes);
  }

  track(eventType: string, options?: TrackOptions): void {
    this.tracker.track(eventType, this.userId, options);
  }

  private async load(): Promise<void> {
    const generation = ++this.generation;
    const query = this.attributes === undefined ? '' : `?context=${encodeURIComponent(JSON.stringify(this.attributes))}`;
    const flags = await this.http.json<Record<string, boolean>>('GET', `/feature-flags/user/${encodeURIComponent(this.userId)}${query}`);
    if (generation !== this.generation) return;
    const changed = [...new Set([...Object.keys(this.flags), ...Object.keys(flags)])].filter((k) => this.flags[k] !== flags[k]).sort();
    this.flags = flags;
    if (changed.length > 0) this.emit({ type: 'ruleset', version: undefined, changed });
  }

  private async poll(pollMs: number): Promise<void> {
    for (let failures = 0; ; ) {
      await sleep(failures === 0 ? pollMs : Math.max(pollMs, backoffMs(failures)), this.stop.signal);
      if (this.stop.signal.aborted) return;
      try {
        await this.load();
        failures = 0;
      } catch (error) {
        failures += 1;
        this.emit({ type: 'error', error: error as Error });
      }
    }
  }
}

export { UpliftError, type FetchLike } from './http.js';
export type { Assignment, Attributes, TrackOptions, UpliftEvent } from './types.js';
