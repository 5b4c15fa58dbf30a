import { and, asc, eq, gt, lt, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { loginFailures } from '../../db/schema/auth.js';

/**
 * Emails are folded by the database's own `lower()`, the function the unique index on users.email uses, so the
 * lockout count and the account lookup always agree on which spellings are the same email.
 */
const folded = (email: string) => sql`lower(${email})`;

/** Serialises sign-in attempts on one email until the transaction ends (every API process shares the lock). */
export async function lockEmail(tx: Executor, email: string): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('uplift.login.' || current_schema() || ${folded(email)}))`);
}

/** Records an attempt as failed; returns its id so a successful attempt can take it back. */
export async function recordFailure(db: Executor, email: string, at: Date): Promise<number> {
  const [row] = await db.insert(loginFailures).values({ emailKey: folded(email), failedAt: at }).returning({ id: loginFailures.id });
  return row.id;
}

export async function deleteFailure(db: Executor, id: number): Promise<void> {
  await db.delete(loginFailures).where(eq(loginFailures.id, id));
}

/** Failure times for the email since `since`, oldest first. */
export async function failuresSince(db: Executor, email: string, since: Date): Promise<Date[]> {
  const rows = await db
    .select({ at: loginFailures.failedAt })
    .from(loginFailures)
    .where(and(eq(loginFailures.emailKey, folded(email)), gt(loginFailures.failedAt, since)))
    .orderBy(asc(loginFailures.failedAt));
  return rows.map((r) => r.at);
}

export async function clearFailures(db: Executor, email: string): Promise<void> {
  await db.delete(loginFailures).where(eq(loginFailures.emailKey, folded(email)));
}

/** Housekeeping: failures older than the lockout window no longer count. */
export async function pruneFailures(db: Executor, before: Date): Promise<void> {
  await db.delete(loginFailures).where(lt(loginFailures.failedAt, sql`${before.toISOString()}::timestamptz`));
}
