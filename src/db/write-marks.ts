/**
 * How far the data stamped with `created_at` is final (docs/adr/0007-rollup-follows-commits.md): the bound a rollup
 * may move its watermark to without passing a row that a transaction still in flight will commit later.
 *
 * `created_at` is the application's clock (injected in tests), taken when a request arrives; the row then waits in the
 * group-commit writer's queue. So the writers stamp their rows inside their transaction, in two steps:
 *   1. they announce the transaction as writing, with their clock's time s1, in the session's application_name
 *      (`uplift-write:<ms>:<schema digest>`, SET LOCAL: it ends with the transaction), which pg_stat_activity shows
 *      to other sessions;
 *   2. once that is done, they read the clock again (s2) and raise any row older than max(s1, s2) - STAMP_ALLOWANCE_MS
 *      to that floor (a row that waited in the queue longer than the allowance is stored as of its write).
 * A rollup reads its clock (n), then the oldest announcement of the other sessions (o), and may go up to
 * min(n - CLOCK_SKEW_MS, o) - STAMP_ALLOWANCE_MS, exclusive of that instant:
 *   - a writer it sees has every row at or after o - STAMP_ALLOWANCE_MS (same process clock as the announcement);
 *   - a writer it does not see announced after the rollup read pg_stat_activity, so its s2 was read after n, and its
 *     rows are at or after s2 - STAMP_ALLOWANCE_MS > n - CLOCK_SKEW_MS - STAMP_ALLOWANCE_MS, as long as the clocks of
 *     the API processes differ by less than CLOCK_SKEW_MS.
 * Under embedded PGlite (one connection) a transaction holds the only connection until it commits, so a rollup's reads
 * come after every write that began before them, and the same rule holds with no other session to see.
 * When the other sessions cannot be seen (a role without pg_read_all_stats sees others' sessions without their
 * application_name), the rule falls back to the conservative lag the caller gives.
 */
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { Clock } from '../platform/clock.js';
import { queryRows, type Db, type Executor } from './client.js';

/** A row that waited longer than this between its request and its write is stored as of its write, less this. */
export const STAMP_ALLOWANCE_MS = 500;
/** The largest difference assumed between the clocks of two API processes (NTP keeps hosts within milliseconds). */
export const CLOCK_SKEW_MS = 500;
/** How far behind its clock a rollup stays when no write is in flight. */
export const QUIET_LAG_MS = CLOCK_SKEW_MS + STAMP_ALLOWANCE_MS + 1;
/**
 * `uplift-write:<ms>:<schema digest>`: the schema (the search path's first) tells apart the writers of other
 * databases' tables sharing the server (tests run a schema each); its digest keeps the name under 63 characters.
 */
const MARK = 'uplift-write:';
const SCHEMA_DIGEST_TEXT = 'left(md5(current_schema()), 8)';
const SCHEMA_DIGEST = sql.raw(SCHEMA_DIGEST_TEXT);

/**
 * Called first in a writer's transaction, before its INSERT: announces it as writing, then raises rows stamped
 * before the floor (mutates `createdAt`, so the caller answers with what was stored).
 */
export async function stampWrite(tx: Executor, clock: Clock, rows: Array<{ createdAt: Date }>): Promise<void> {
  const announced = clock.now().getTime();
  await tx.execute(sql`SELECT set_config('application_name', ${`${MARK}${announced}:`} || ${SCHEMA_DIGEST}, true)`);
  raiseToFloor(announced, clock, rows);
}

/** Step 2 of the stamp, once the announcement made at `announced` is visible. */
function raiseToFloor(announced: number, clock: Clock, rows: Array<{ createdAt: Date }>): void {
  const floor = Math.max(announced, clock.now().getTime()) - STAMP_ALLOWANCE_MS;
  for (const row of rows) if (row.createdAt.getTime() < floor) row.createdAt = new Date(floor);
}

/**
 * A writer's transaction, stamped first (stampWrite's rule), running `write` in it. On PostgreSQL the BEGIN and the
 * announcement are one round trip (two statements in one simple query; the mark holds only digits and the schema's
 * digest), so a batch costs BEGIN and stamp, its statements and COMMIT: one round trip fewer than Drizzle's BEGIN
 * followed by the stamp, which a new user's assignment (often a batch of one) paid in full. Under PGlite (one
 * connection, no round trips) Drizzle's transaction.
 */
export async function stampedTransaction<T>(db: Db, clock: Clock, rows: Array<{ createdAt: Date }>, write: (tx: Executor) => Promise<T>): Promise<T> {
  const pool = (db as { $client?: unknown }).$client;
  if (!(pool instanceof pg.Pool)) {
    return db.transaction(async (tx) => {
      await stampWrite(tx, clock, rows);
      return write(tx);
    });
  }
  const client = await pool.connect();
  try {
    const announced = clock.now().getTime();
    await client.query(`BEGIN; SELECT set_config('application_name', '${MARK}${Math.trunc(announced)}:' || ${SCHEMA_DIGEST_TEXT}, true)`);
    raiseToFloor(announced, clock, rows);
    let result: T;
    try {
      result = await write(drizzle(client) as unknown as Executor);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    await client.query('COMMIT');
    return result;
  } finally {
    client.release();
  }
}

/**
 * The instant up to which (inclusive) every row is committed or will be stamped later: the rollup's `upTo`. Falls
 * back to now - `fallbackLagMs` when the other sessions cannot all be seen or the view cannot be read.
 */
export async function committedThrough(db: Executor, clock: Clock, fallbackLagMs: number): Promise<Date> {
  const now = clock.now().getTime();
  try {
    const [row] = await queryRows<{ hidden: boolean | null; oldest: string | number | null }>(db, sql`
      SELECT bool_or(state IS NULL) AS hidden,
             min(substring(application_name FROM ${`^${MARK}(\\d+):`})::bigint)
               FILTER (WHERE application_name ~ (${`^${MARK}\\d+:`} || ${SCHEMA_DIGEST} || '$')) AS oldest
      FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`);
    if (row?.hidden) return new Date(now - fallbackLagMs);
    const oldest = row?.oldest === null || row?.oldest === undefined ? Infinity : Number(row.oldest);
    return new Date(Math.min(now - CLOCK_SKEW_MS, oldest) - STAMP_ALLOWANCE_MS - 1);
  } catch {
    return new Date(now - fallbackLagMs);
  }
}
