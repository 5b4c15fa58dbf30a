import { asc, eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { integrations, type IntegrationRow, type IntegrationType } from '../../db/schema/integrations.js';

export function listIntegrations(db: Executor): Promise<IntegrationRow[]> {
  return db.select().from(integrations).orderBy(asc(integrations.integrationType));
}

export async function findIntegration(db: Executor, type: IntegrationType): Promise<IntegrationRow | undefined> {
  const [row] = await db.select().from(integrations).where(eq(integrations.integrationType, type));
  return row;
}

/** The row locked for the rest of the transaction, so concurrent key-by-key merges apply one after the other. */
export async function lockIntegration(db: Executor, type: IntegrationType): Promise<IntegrationRow | undefined> {
  const [row] = await db.select().from(integrations).where(eq(integrations.integrationType, type)).for('update');
  return row;
}

export async function insertIntegration(db: Executor, values: typeof integrations.$inferInsert): Promise<IntegrationRow> {
  const [row] = await db.insert(integrations).values(values).returning();
  return row;
}

export async function updateIntegration(db: Executor, id: string, values: Partial<typeof integrations.$inferInsert>): Promise<IntegrationRow> {
  const [row] = await db.update(integrations).set(values).where(eq(integrations.id, id)).returning();
  return row;
}

export async function deleteIntegration(db: Executor, id: string): Promise<void> {
  await db.delete(integrations).where(eq(integrations.id, id));
}
