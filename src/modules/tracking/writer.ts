import type { Db } from '../../db/client.js';
import { createBatchWriter } from '../../platform/batch-writer.js';
import { insertEvents, type EventRow } from './store.js';

/**
 * The group-commit writer for events and view events. Sizes: a statement carries at most 2,000 rows (one request
 * of /tracking/batch is at most 1,000, never split); up to 4 statements run at once; 200,000 queued rows (about
 * 100 MB) is the back-pressure bound beyond which requests get 503.
 */
export function createEventWriter(db: Db) {
  return createBatchWriter<EventRow>({
    name: 'events',
    maxBatchRows: 2_000,
    maxQueuedRows: 200_000,
    concurrency: 4,
    flush: (rows) => insertEvents(db, rows),
  });
}
