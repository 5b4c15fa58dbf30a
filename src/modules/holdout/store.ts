import { desc, eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { holdouts, type HoldoutRow } from '../../db/schema/holdout.js';

export async function insertHoldout(db: Executor, values: typeof holdouts.$inferInsert): Promise<HoldoutRow> {
  const [row] = await db.insert(holdouts).values(values).returning();
  return row;
}

export async function findHoldout(db: Executor, id: string): Promise<HoldoutRow | undefined> {
  const [row] = await db.select().from(holdouts).where(eq(holdouts.id, id));
  return row;
}

export async function lockHoldout(db: Executor, id: string): Promise<HoldoutRow | undefined> {
  const [row] = await db.select().from(holdouts).where(eq(holdouts.id, id)).for('update');
  return row;
}

export async function findActiveHoldout(db: Executor): Promise<HoldoutRow | undefined> {
  const [row] = await db.select().from(holdouts).where(eq(holdouts.isActive, true));
  return row;
}

export function listHoldouts(db: Executor): Promise<HoldoutRow[]> {
  return db.select().from(holdouts).orderBy(desc(holdouts.createdAt), desc(holdouts.id));
}

export async function updateHoldout(db: Executor, id: string, values: Partial<typeof holdouts.$inferInsert>): Promise<HoldoutRow> {
  const [row] = await db.update(holdouts).set(values).where(eq(holdouts.id, id)).returning();
  return row;
}
