import { ServiceUnavailable } from './errors.js';
import { report, telemetry } from './telemetry.js';

/**
 * Group commit. Concurrent requests hand their rows to one bounded in-process queue. While fewer than
 * `concurrency` statements are in flight, waiting rows are written at once (no added latency when idle); while all
 * are busy, rows accumulate and the next free statement takes up to `maxBatchRows` of them in one multi-row
 * INSERT, so batches grow exactly as load does. Each `write` resolves only after its rows are committed, so an
 * acknowledged request survives a killed process; when the queue is full a write is refused at once (503 with
 * Retry-After) instead of growing without bound, and nothing is dropped silently. `drain` writes everything
 * queued (shutdown).
 */
export interface BatchWriterOptions<T> {
  name: string;
  maxBatchRows: number;
  maxQueuedRows: number;
  concurrency: number;
  flush(rows: T[]): Promise<void>;
}

export interface BatchWriter<T> {
  write(rows: T[]): Promise<void>;
  drain(): Promise<void>;
  /** Rows waiting to be written (for health and tests). */
  readonly queued: number;
}

export const QUEUE_FULL = 'The service is receiving more data than it can store right now; retry shortly.';

interface Pending<T> {
  rows: T[];
  resolve(): void;
  reject(error: unknown): void;
}

export function createBatchWriter<T>(options: BatchWriterOptions<T>): BatchWriter<T> {
  let queue: Pending<T>[] = [];
  let queuedRows = 0;
  let inFlight = 0;
  const idleWaiters: Array<() => void> = [];

  function schedule(): void {
    while (queuedRows > 0 && inFlight < options.concurrency) flushOnce();
  }

  /** Takes whole requests from the head of the queue up to the batch size (a request is never split). */
  function flushOnce(): void {
    const batch: Pending<T>[] = [];
    let rows = 0;
    while (queue.length && (rows === 0 || rows + queue[0].rows.length <= options.maxBatchRows)) {
      const next = queue.shift()!;
      batch.push(next);
      rows += next.rows.length;
    }
    if (batch.length === 0) return;
    queuedRows -= rows;
    inFlight++;
    writeBatch(batch).finally(() => {
      inFlight--;
      if (queuedRows > 0) schedule();
      else if (inFlight === 0) idleWaiters.splice(0).forEach((w) => w());
    });
  }

  /**
   * One statement for the whole batch; if it fails, each request is retried on its own so that one request's bad
   * row cannot refuse its neighbours' good ones.
   */
  async function writeBatch(batch: Pending<T>[]): Promise<void> {
    try {
      const rows = batch.length === 1 ? batch[0].rows : batch.flatMap((p) => p.rows);
      await options.flush(rows);
      report(telemetry.batchWritten, { writer: options.name, rows: rows.length });
      batch.forEach((p) => p.resolve());
    } catch (error) {
      if (batch.length === 1) return batch[0].reject(error);
      for (const pending of batch) {
        await options.flush(pending.rows).then(pending.resolve, pending.reject);
      }
    }
  }

  return {
    write(rows) {
      if (rows.length === 0) return Promise.resolve();
      if (queuedRows + rows.length > options.maxQueuedRows && queuedRows > 0) {
        return Promise.reject(new ServiceUnavailable(QUEUE_FULL, 1));
      }
      return new Promise<void>((resolve, reject) => {
        queue.push({ rows, resolve, reject });
        queuedRows += rows.length;
        schedule();
      });
    },
    async drain() {
      while (queuedRows > 0 || inFlight > 0) {
        schedule();
        await new Promise<void>((resolve) => idleWaiters.push(resolve));
      }
      queue = [];
    },
    get queued() {
      return queuedRows;
    },
  };
}
