import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/client.js';

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
