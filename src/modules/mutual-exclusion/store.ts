import { and, asc, desc, eq, inArray, ne, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import {
  mutualExclusionGroups as groups,
  mutualExclusionMembers as members,
  type MutexGroupRow,
  type MutexGroupStatus,
} from '../../db/schema/mutual-exclusion.js';

/** One lock for every membership or status change: "at most one active group per experiment" spans groups. */
const MEMBERSHIP_LOCK_ID = 7_301_003;

export async function lockMemberships(db: Executor): Promise<void> {
  await db.execute(sql`SELECT pg_advisory_xact_lock(${sql.raw(String(MEMBERSHIP_LOCK_ID))})`);
}

export async function insertGroup(db: Executor, values: typeof groups.$inferInsert): Promise<MutexGroupRow> {
  const [row] = await db.insert(groups).values(values).returning();
  return row;
}

export async function findGroup(db: Executor, id: string): Promise<MutexGroupRow | undefined> {
  const [row] = await db.select().from(groups).where(eq(groups.id, id));
  return row;
}

export async function updateGroup(db: Executor, id: string, values: Partial<typeof groups.$inferInsert>): Promise<MutexGroupRow> {
  const [row] = await db.update(groups).set(values).where(eq(groups.id, id)).returning();
  return row;
}

export function listGroups(db: Executor, status?: MutexGroupStatus): Promise<MutexGroupRow[]> {
  return db
    .select()
    .from(groups)
    .where(status ? eq(groups.status, status) : undefined)
    .orderBy(desc(groups.createdAt), desc(groups.id));
}

/** Members of these groups in the order they joined (the order mutexSlot lays shares out in). */
export function listMembers(db: Executor, groupIds: string[]): Promise<Array<{ groupId: string; experimentId: string }>> {
  if (groupIds.length === 0) return Promise.resolve([]);
  return db
    .select({ groupId: members.groupId, experimentId: members.experimentId })
    .from(members)
    .where(inArray(members.groupId, groupIds))
    .orderBy(asc(members.seq));
}

export async function addMembers(db: Executor, groupId: string, experimentIds: string[], addedAt: Date): Promise<void> {
  if (experimentIds.length === 0) return;
  await db.insert(members).values(experimentIds.map((experimentId) => ({ groupId, experimentId, addedAt }))).onConflictDoNothing();
}

export async function removeMember(db: Executor, groupId: string, experimentId: string): Promise<boolean> {
  const removed = await db
    .delete(members)
    .where(and(eq(members.groupId, groupId), eq(members.experimentId, experimentId)))
    .returning({ experimentId: members.experimentId });
  return removed.length > 0;
}

/** Which of these experiments already belong to an active group other than `exceptGroupId`. */
export async function inOtherActiveGroup(db: Executor, experimentIds: string[], exceptGroupId: string | null): Promise<string[]> {
  if (experimentIds.length === 0) return [];
  const rows = await db
    .select({ experimentId: members.experimentId })
    .from(members)
    .innerJoin(groups, eq(groups.id, members.groupId))
    .where(
      and(
        inArray(members.experimentId, experimentIds),
        eq(groups.status, 'active'),
        exceptGroupId ? ne(groups.id, exceptGroupId) : undefined,
      ),
    );
  return rows.map((r) => r.experimentId);
}

export async function activeGroupOf(db: Executor, experimentId: string): Promise<MutexGroupRow | undefined> {
  const [row] = await db
    .select({ group: groups })
    .from(members)
    .innerJoin(groups, eq(groups.id, members.groupId))
    .where(and(eq(members.experimentId, experimentId), eq(groups.status, 'active')));
  return row?.group;
}
