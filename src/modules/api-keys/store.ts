import { and, desc, eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { apiKeys, type ApiKeyRow } from '../../db/schema/api-keys.js';
import { users } from '../../db/schema/users.js';

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

/** The key with this hash and its owner's standing; keys of inactive owners are not returned. */
export async function findActiveKeyByHash(db: Executor, keyHash: string) {
  const [row] = await db
    .select({
      id: apiKeys.id,
      userId: apiKeys.userId,
      scopes: apiKeys.scopes,
      ownerRole: users.role,
      ownerIsSuperuser: users.isSuperuser,
    })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(and(eq(apiKeys.keyHash, keyHash), eq(users.isActive, true)));
  return row;
}
