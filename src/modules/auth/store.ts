import { and, asc, eq, gt, lt, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { loginFailures } from '../../db/schema/auth.js';

export async function recordFailure(db: Executor, emailKey: string, at: Date): Promise<void> {
  await db.insert(loginFailures).values({ emailKey, failedAt: at });
}

/** Failure times for the email since `since`, oldest first. */
export async function failuresSince(db: Executor, emailKey: string, since: Date): Promise<Date[]> {
  const rows = await db
    .select({ at: loginFailures.failedAt })
    .from(loginFailures)
    .where(and(eq(loginFailures.emailKey, emailKey), gt(loginFailures.failedAt, since)))
    .orderBy(asc(loginFailures.failedAt));
  return rows.map((r) => r.at);
}

export async function clearFailures(db: Executor, emailKey: string): Promise<void> {
  await db.delete(loginFailures).where(eq(loginFailures.emailKey, emailKey));
}

/** Housekeeping: failures older than the lockout window no longer count. */
export async function pruneFailures(db: Executor, before: Date): Promise<void> {
  await db.delete(loginFailures).where(lt(loginFailures.failedAt, sql`${before.toISOString()}::timestamptz`));
}
