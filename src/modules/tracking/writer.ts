import type { Db } from '../../db/client.js';
import { stampedTransaction } from '../../db/write-marks.js';
import { createBatchWriter } from '../../platform/batch-writer.js';
import type { Clock } from '../../platform/clock.js';
import type { CommitAnnouncer } from './domain.js';
import { assignmentKey, insertAssignmentsIfAbsent, insertEvents, type AssignmentRow, type EventRow } from './store.js';

/**
 * The group-commit writer for events and view events. Sizes: a statement carries at most 2,000 rows (one request
 * of /tracking/batch is at most 1,000, never split); up to 4 statements run at once; 200,000 queued rows (about
 * 100 MB) is the back-pressure bound beyond which requests get 503. Each committed statement is announced
 * (`committed`), so that results of the experiments it touches are brought forward on their next read. Each statement
 * runs in a transaction stamped first (stampedTransaction), so that a results rollup never moves past a row still in flight.
 */
export function createEventWriter(db: Db, clock: Clock, committed?: CommitAnnouncer) {
  return createBatchWriter<EventRow>({
    name: 'events',
    maxBatchRows: 2_000,
    maxQueuedRows: 200_000,
    concurrency: 4,
    async flush(rows) {
      await stampedTransaction(db, clock, rows, (tx) => insertEvents(tx, rows));
      committed?.(rows.map((r) => r.experimentId), rows.some((r) => r.experimentId === null && r.featureFlagId !== null && r.kind === 'track'));
    },
  });
}

interface PendingAssignment {
  row: AssignmentRow;
  /** Receives the row that holds for (experiment, user): this one, or one stored first. */
  settle(held: AssignmentRow): void;
}

export interface AssignmentWriter {
  insertIfAbsent(row: AssignmentRow): Promise<AssignmentRow>;
  drain(): Promise<void>;
  /** Rows waiting to be written (metrics). */
  readonly queued: number;
}

/**
 * Group commit for first assignments: concurrent new users are stored with one multi-row insert-if-absent. Each
 * caller is answered with the row that holds once it is committed, so concurrent first calls for one user still
 * agree (the unique index decides, across requests and processes alike).
 */
export function createAssignmentWriter(db: Db, clock: Clock, committed?: CommitAnnouncer): AssignmentWriter {
  const key = (r: AssignmentRow) => assignmentKey(r.experimentId, r.userId);
  const writer = createBatchWriter<PendingAssignment>({
    name: 'assignments',
    maxBatchRows: 1_000,
    maxQueuedRows: 50_000,
    concurrency: 4,
    async flush(pending) {
      // Two requests for one user in the same batch: the first one's row is proposed, both get what holds.
      const proposed = new Map<string, AssignmentRow>();
      for (const p of pending) if (!proposed.has(key(p.row))) proposed.set(key(p.row), p.row);
      const rows = [...proposed.values()];
      const held = await stampedTransaction(db, clock, rows, (tx) => insertAssignmentsIfAbsent(tx, rows));
      for (const p of pending) p.settle(held.get(key(p.row))!);
      committed?.([...proposed.values()].map((r) => r.experimentId), false);
    },
  });
  return {
    async insertIfAbsent(row) {
      let result: AssignmentRow | undefined;
      await writer.write([{ row, settle: (held) => (result = held) }]);
      return result!;
    },
    drain: () => writer.drain(),
    get queued() {
      return writer.queued;
    },
  };
}
