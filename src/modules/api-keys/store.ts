import { and, desc, eq, isNull, lte, or, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { apiKeys, type ApiKeyRow } from '../../db/schema/api-keys.js';

export async function insertApiKey(db: Executor, values: typeof apiKeys.$inferInsert): Promise<ApiKeyRow> {
  const [row] = await db.insert(apiKeys).values(values).returning();
  return row;
}

export function listApiKeys(db: Executor, userId?: string): Promise<ApiKeyRow[]> {
  return db
    .select()
    .from(apiKeys)
    .where(userId ? eq(apiKeys.userId, userId) : undefined)
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
}

export async function findApiKey(db: Executor, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, id));
  return row;
}

export async function deleteApiKey(db: Executor, id: string): Promise<void> {
  await db.delete(apiKeys).where(eq(apiKeys.id, id));
}

/** The key with this hash (its owner's standing comes from the users module). */
export async function findKeyByHash(db: Executor, keyHash: string) {
  const [row] = await db
    .select({ id: apiKeys.id, userId: apiKeys.userId, scopes: apiKeys.scopes, expiresAt: apiKeys.expiresAt, environment: apiKeys.environment })
    .from(apiKeys)
    .where(eq(apiKeys.keyHash, keyHash));
  return row;
}

/** Notes a use at `at` unless one after `since` is already noted (another process wrote it). */
export async function touchLastUsed(db: Executor, id: string, at: Date, since: Date): Promise<void> {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: at })
    .where(and(eq(apiKeys.id, id), or(isNull(apiKeys.lastUsedAt), lte(apiKeys.lastUsedAt, since))));
}

/** How many keys belong to the environment (an environment keys belong to is not deleted). */
export async function countInEnvironment(db: Executor, environment: string): Promise<number> {
  const [{ count }] = await db.select({ count: sql<number>`count(*)::int` }).from(apiKeys).where(eq(apiKeys.environment, environment));
  return count;
}
