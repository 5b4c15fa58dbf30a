import { asc, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { environments, type EnvironmentRow } from '../../db/schema/environments.js';

export function listEnvironments(db: Executor): Promise<EnvironmentRow[]> {
  return db.select().from(environments).orderBy(asc(environments.sortOrder), asc(environments.key));
}

export async function findEnvironment(db: Executor, key: string): Promise<EnvironmentRow | undefined> {
  const [row] = await db.select().from(environments).where(eq(environments.key, key));
  return row;
}

/**
 * Every environment write takes this transaction lock first: the limit count, the default move and the delete checks
 * see no concurrent environment change.
 */
export async function lockEnvironments(db: Executor): Promise<void> {
  await db.execute(sql`SELECT pg_advisory_xact_lock(hashtext('uplift.environments.' || current_schema()))`);
}

export async function countEnvironments(db: Executor): Promise<number> {
  const [{ count }] = await db.select({ count: sql<number>`count(*)::int` }).from(environments);
  return count;
}

export async function insertEnvironment(db: Executor, values: typeof environments.$inferInsert): Promise<EnvironmentRow> {
  const [row] = await db.insert(environments).values(values).returning();
  return row;
}

export async function updateEnvironment(db: Executor, key: string, values: Partial<typeof environments.$inferInsert>): Promise<EnvironmentRow> {
  const [row] = await db.update(environments).set(values).where(eq(environments.key, key)).returning();
  return row;
}

/** Clears the default flag everywhere (the caller sets it on the new default in the same transaction). */
export async function clearDefault(db: Executor): Promise<void> {
  await db.update(environments).set({ isDefault: false }).where(eq(environments.isDefault, true));
}

export async function deleteEnvironment(db: Executor, key: string): Promise<void> {
  await db.delete(environments).where(eq(environments.key, key));
}
