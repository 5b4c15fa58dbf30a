import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';
import { INSUFFICIENT_PRIVILEGE, LOCK_NOT_AVAILABLE, sqlState } from '../../db/errors.js';

const PARTITION_LOCK = 7_301_004;

function monthStart(year: number, month: number): Date {
  return new Date(Date.UTC(year, month, 1));
}

export function partitionName(start: Date): string {
  return `events_y${start.getUTCFullYear()}m${String(start.getUTCMonth() + 1).padStart(2, '0')}`;
}

/**
 * Makes sure the events table has monthly partitions from the current month to `monthsAhead` months later.
 * Rows that already landed in the DEFAULT partition for a new month are moved into it in the same transaction,
 * so nothing is lost and ATTACH's check of the default partition passes. Idempotent and safe to run from several
 * processes (a transaction-scoped advisory lock serialises them). Returns the partitions it created.
 */
export async function ensureEventPartitions(db: Db, now: Date, monthsAhead = 3): Promise<string[]> {
  const created: string[] = [];
  for (let i = 0; i <= monthsAhead; i++) {
    const from = monthStart(now.getUTCFullYear(), now.getUTCMonth() + i);
    const to = monthStart(from.getUTCFullYear(), from.getUTCMonth() + 1);
    const name = partitionName(from);
    const made = await db.transaction(async (tx) => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(${PARTITION_LOCK})`);
      const exists = await queryRows<{ one: number }>(tx, sql`SELECT 1 AS one FROM pg_class WHERE relname = ${name} AND relnamespace = current_schema()::regnamespace`);
      if (exists.length) return false;
      const range = sql.raw(`FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`);
      const table = sql.raw(name);
      await tx.execute(sql`CREATE TABLE ${table} (LIKE events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
      await tx.execute(sql`
        WITH moved AS (
          DELETE FROM events_default WHERE created_at >= ${from.toISOString()}::timestamptz AND created_at < ${to.toISOString()}::timestamptz
          RETURNING *
        ) INSERT INTO ${table} SELECT * FROM moved`);
      await tx.execute(sql`ALTER TABLE events ATTACH PARTITION ${table} FOR VALUES ${range}`);
      return true;
    });
    if (made) created.push(name);
  }
  return created;
}

/** How long the summary waits for a partition another process holds (autovacuum, a concurrent summary) before skipping it. */
const SUMMARY_LOCK_TIMEOUT_MS = 100;

/**
 * Summarizes the block ranges of events_created_at_brin filled since the last summary, in every partition. A range
 * without a summary matches every window, so the results rollup and reads of the events since a watermark would read
 * all of them; autosummarize requests are dropped when autovacuum's queue is full (about 250 ranges, a few seconds of
 * heavy ingestion), and VACUUM summarizes only when it runs, so the job does it every minute: each new page is read
 * once, and windows read their own ranges. A partition whose lock is held (by VACUUM, which summarizes too, or by
 * another process) is skipped after SUMMARY_LOCK_TIMEOUT_MS, well before autovacuum would be cancelled for it
 * (deadlock_timeout); so is one this role may not maintain. Returns the ranges summarized.
 */
export async function summarizeEventRanges(db: Db): Promise<number> {
  const indexes = await queryRows<{ index: string }>(db, sql`
    SELECT inhrelid::regclass::text AS index FROM pg_inherits WHERE inhparent = 'events_created_at_brin'::regclass ORDER BY 1`);
  let summarized = 0;
  for (const { index } of indexes) {
    try {
      summarized += await db.transaction(async (tx) => {
        await tx.execute(sql`SELECT set_config('lock_timeout', ${String(SUMMARY_LOCK_TIMEOUT_MS)}, true)`);
        const [{ n }] = await queryRows<{ n: number }>(tx, sql`SELECT brin_summarize_new_values(${index}::regclass)::int AS n`);
        return n;
      });
    } catch (error) {
      // The partition is busy, or not this role's to maintain: the next run tries again.
      const code = sqlState(error);
      if (code !== LOCK_NOT_AVAILABLE && code !== INSUFFICIENT_PRIVILEGE) throw error;
    }
  }
  return summarized;
}
