import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBatchWriter, QUEUE_FULL } from './batch-writer.js';

/** A flush that stays in flight until the writes made in the same turn have queued (the writer starts it at once). */
function recorder(failWhen?: (rows: number[]) => boolean) {
  const batches: number[][] = [];
  return {
    batches,
    flush: async (rows: number[]) => {
      await Promise.resolve();
      if (failWhen?.(rows)) throw new Error('write failed');
      batches.push([...rows]);
    },
  };
}

describe('batch writer (group commit)', () => {
  it('writes at once when idle and gathers writes arriving meanwhile into one statement', async () => {
    const rec = recorder();
    const writer = createBatchWriter({ name: 't', maxBatchRows: 100, maxQueuedRows: 1000, concurrency: 1, flush: rec.flush });
    const acks: number[] = [];
    await Promise.all([1, 2, 3, 4].map((i) => writer.write([i]).then(() => acks.push(i))));
    expect(rec.batches).toEqual([[1], [2, 3, 4]]);
    expect(acks.sort()).toEqual([1, 2, 3, 4]);
  });

  it('writes at once when a full batch is waiting, never splitting a request', async () => {
    const rec = recorder();
    const writer = createBatchWriter({ name: 't', maxBatchRows: 3, maxQueuedRows: 100, concurrency: 1, flush: rec.flush });
    await Promise.all([writer.write([1, 2]), writer.write([3, 4]), writer.write([5])]);
    expect(rec.batches.flat().sort()).toEqual([1, 2, 3, 4, 5]);
    for (const b of rec.batches) expect(b.length).toBeLessThanOrEqual(3);
  });

  it('rejects only the requests of a failed statement', async () => {
    const rec = recorder((rows) => rows.includes(13));
    const writer = createBatchWriter({ name: 't', maxBatchRows: 2, maxQueuedRows: 100, concurrency: 1, flush: rec.flush });
    const results = await Promise.allSettled([writer.write([1, 2]), writer.write([13]), writer.write([3])]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(rec.batches.flat()).not.toContain(13);
  });

  it('refuses writes beyond the queue bound with 503 and Retry-After, dropping nothing it accepted', async () => {
    const rec = recorder();
    const writer = createBatchWriter({ name: 't', maxBatchRows: 2, maxQueuedRows: 4, concurrency: 1, flush: rec.flush });
    // [1, 2] is being written at once, [3, 4] waits; the queue holds 4 rows.
    const accepted = [writer.write([1, 2]), writer.write([3, 4])];
    const more = [writer.write([5, 6]), writer.write([7, 8]), writer.write([9, 10])];
    const settled = await Promise.allSettled([...accepted, ...more]);
    const refused = settled.filter((s) => s.status === 'rejected') as PromiseRejectedResult[];
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.reason).toMatchObject({ statusCode: 503, detail: QUEUE_FULL, headers: { 'Retry-After': '1' } });
    }
    const acceptedCount = settled.filter((s) => s.status === 'fulfilled').length * 2;
    expect(rec.batches.flat()).toHaveLength(acceptedCount);
  });

  it('drain writes everything queued', async () => {
    const rec = recorder();
    const writer = createBatchWriter({ name: 't', maxBatchRows: 1000, maxQueuedRows: 10_000, concurrency: 2, flush: rec.flush });
    const pending = Array.from({ length: 50 }, (_, i) => writer.write([i]));
    await writer.drain();
    await Promise.all(pending);
    expect(rec.batches.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(writer.queued).toBe(0);
  });

  it('property: every accepted row is written exactly once, whatever the batch sizes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 10 }), async (sizes, batch) => {
        const rec = recorder();
        const writer = createBatchWriter({ name: 'p', maxBatchRows: batch, maxQueuedRows: 10_000, concurrency: 2, flush: rec.flush });
        let next = 0;
        const requests = sizes.map((n) => Array.from({ length: n }, () => next++));
        await Promise.all(requests.map((rows) => writer.write(rows)));
        expect(rec.batches.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: next }, (_, i) => i));
      }),
      { numRuns: 40 },
    );
  });
});
