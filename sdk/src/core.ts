import { Http, type HttpOptions } from './http.js';
import { Assigner, Tracker } from './tracker.js';
import type { UpliftEvent } from './types.js';

/** What the server and browser clients share: HTTP, tracking, assignment, listeners and shutdown. */
export abstract class ClientCore {
  protected readonly http: Http;
  protected readonly tracker: Tracker;
  protected readonly assigner: Assigner;
  /** Aborted by close(): background work (updates, polling) stops. */
  protected readonly stop = new AbortController();
  /** The background work close() waits for. */
  protected background: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<(event: UpliftEvent) => void>();

  constructor(options: HttpOptions) {
    this.http = new Http(options);
    this.tracker = new Tracker(this.http, (error) => this.emit({ type: 'error', error }));
    this.assigner = new Assigner(this.http);
  }

  /** Sends the queued events now. */
  flush(): Promise<void> {
    return this.tracker.flush();
  }

  /** Flag changes and background errors; returns the unsubscribe function. */
  subscribe(listener: (event: UpliftEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops updates and sends the queued events. Evaluation keeps answering from the last flags held. */
  async close(): Promise<void> {
    this.stop.abort();
    await Promise.all([this.tracker.close(), this.background]);
  }

  protected emit(event: UpliftEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure is the listener's: updates go on.
      }
    }
  }
}
