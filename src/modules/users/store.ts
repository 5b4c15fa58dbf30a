import { and, desc, eq, ilike, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { users, type UserRow } from '../../db/schema/users.js';
import { containsPattern } from '../../db/errors.js';

export async function findUserById(db: Executor, id: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, id));
  return row;
}

export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`);
  return row;
}

export async function findUserByUsername(db: Executor, username: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.username, username));
  return row;
}

/** Whether another account (not `exceptId`) holds the email in any letter case. */
export async function emailTaken(db: Executor, email: string, exceptId?: string): Promise<boolean> {
  const where = exceptId
    ? and(sql`lower(${users.email}) = lower(${email})`, sql`${users.id} <> ${exceptId}`)
    : sql`lower(${users.email}) = lower(${email})`;
  const [row] = await db.select({ id: users.id }).from(users).where(where).limit(1);
  return Boolean(row);
}

export async function usernameTaken(db: Executor, username: string, exceptId?: string): Promise<boolean> {
  const where = exceptId ? and(eq(users.username, username), sql`${users.id} <> ${exceptId}`) : eq(users.username, username);
  const [row] = await db.select({ id: users.id }).from(users).where(where).limit(1);
  return Boolean(row);
}

/**
 * Locks the rows of the given accounts in id order (so two superusers changing each other cannot deadlock),
 * waiting at most `timeoutMs` for changes in progress. Returns the rows that still exist.
 */
export async function lockUsers(db: Executor, ids: string[], timeoutMs: number): Promise<UserRow[]> {
  await db.execute(sql.raw(`SET LOCAL lock_timeout = '${Math.round(timeoutMs)}ms'`));
  const unique = [...new Set(ids)].sort();
  return db
    .select()
    .from(users)
    .where(sql`${users.id} IN (${sql.join(unique.map((id) => sql`${id}::uuid`), sql`, `)})`)
    .orderBy(users.id)
    .for('update');
}

export async function insertUser(db: Executor, values: typeof users.$inferInsert): Promise<UserRow> {
  const [row] = await db.insert(users).values(values).returning();
  return row;
}

export async function updateUser(db: Executor, id: string, values: Partial<typeof users.$inferInsert>): Promise<UserRow> {
  const [row] = await db.update(users).set(values).where(eq(users.id, id)).returning();
  return row;
}

export async function deleteUser(db: Executor, id: string): Promise<void> {
  await db.delete(users).where(eq(users.id, id));
}

export async function listUsers(
  db: Executor,
  opts: { skip: number; limit: number; onlyId?: string; search?: string; newestFirst?: boolean },
): Promise<{ rows: UserRow[]; total: number }> {
  const filters: SQL[] = [];
  if (opts.onlyId) filters.push(eq(users.id, opts.onlyId));
  if (opts.search) {
    const pattern = containsPattern(opts.search);
    filters.push(or(ilike(users.username, pattern), ilike(users.email, pattern), ilike(users.fullName, pattern))!);
  }
  const where = filters.length ? and(...filters) : undefined;
  const order = opts.newestFirst ? [desc(users.createdAt), desc(users.id)] : [users.createdAt, users.id];
  const rows = await db.select().from(users).where(where).orderBy(...order).offset(opts.skip).limit(opts.limit);
  const [{ count }] = await db.select({ count: sql<number>`count(*)::int` }).from(users).where(where);
  return { rows, total: count };
}

export async function setLastLogin(db: Executor, id: string, at: Date): Promise<void> {
  await db.update(users).set({ lastLogin: at }).where(eq(users.id, id));
}

export async function findUserByExternalId(db: Executor, externalId: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.externalId, externalId));
  return row;
}

export async function findUserByIdForUpdate(db: Executor, id: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, id)).for('update');
  return row;
}
