import { eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { banditStates } from '../../db/schema/bandit.js';

export type BanditStateRow = typeof banditStates.$inferSelect;

export async function findBanditState(db: Executor, experimentId: string): Promise<BanditStateRow | undefined> {
  const [row] = await db.select().from(banditStates).where(eq(banditStates.experimentId, experimentId));
  return row;
}

export async function saveBanditState(db: Executor, row: BanditStateRow): Promise<BanditStateRow> {
  const [saved] = await db
    .insert(banditStates)
    .values(row)
    .onConflictDoUpdate({ target: banditStates.experimentId, set: { weights: row.weights, source: row.source, engineVersion: row.engineVersion, updatedAt: row.updatedAt } })
    .returning();
  return saved;
}
