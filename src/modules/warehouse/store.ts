import { and, count, desc, eq, gte, inArray, isNull, lte, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import {
  warehouseConnections,
  warehouseRunSlots,
  warehouseRuns,
  warehouseSources,
  type WarehouseConnectionRow,
  type WarehouseRunRow,
  type WarehouseSourceRow,
} from '../../db/schema/warehouse.js';

export type ConnectionInsert = typeof warehouseConnections.$inferInsert;
export type SourceInsert = typeof warehouseSources.$inferInsert;
export type RunInsert = typeof warehouseRuns.$inferInsert;

export async function insertConnection(db: Executor, values: ConnectionInsert): Promise<WarehouseConnectionRow> {
  const [row] = await db.insert(warehouseConnections).values(values).returning();
  return row;
}

export const listConnections = (db: Executor) => db.select().from(warehouseConnections).orderBy(warehouseConnections.createdAt);

export async function findConnection(db: Executor, id: string, forUpdate = false): Promise<WarehouseConnectionRow | undefined> {
  const query = db.select().from(warehouseConnections).where(eq(warehouseConnections.id, id));
  const [row] = forUpdate ? await query.for('update') : await query;
  return row;
}

export async function updateConnection(db: Executor, id: string, values: Partial<ConnectionInsert>): Promise<WarehouseConnectionRow> {
  const [row] = await db.update(warehouseConnections).set(values).where(eq(warehouseConnections.id, id)).returning();
  return row;
}

export async function deleteConnection(db: Executor, id: string): Promise<void> {
  await db.delete(warehouseConnections).where(eq(warehouseConnections.id, id));
}

export async function countSourcesOf(db: Executor, connectionId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(warehouseSources).where(eq(warehouseSources.connectionId, connectionId));
  return row.n;
}

export async function insertSource(db: Executor, values: SourceInsert): Promise<WarehouseSourceRow> {
  const [row] = await db.insert(warehouseSources).values(values).returning();
  return row;
}

export const listSources = (db: Executor) => db.select().from(warehouseSources).orderBy(warehouseSources.createdAt);

export async function findSource(db: Executor, id: string, forUpdate = false): Promise<WarehouseSourceRow | undefined> {
  const query = db.select().from(warehouseSources).where(eq(warehouseSources.id, id));
  const [row] = forUpdate ? await query.for('update') : await query;
  return row;
}

export const findSources = (db: Executor, ids: string[]) => db.select().from(warehouseSources).where(inArray(warehouseSources.id, ids));

export async function updateSource(db: Executor, id: string, values: Partial<SourceInsert>): Promise<WarehouseSourceRow> {
  const [row] = await db.update(warehouseSources).set(values).where(eq(warehouseSources.id, id)).returning();
  return row;
}

export async function deleteSource(db: Executor, id: string): Promise<void> {
  await db.delete(warehouseSources).where(eq(warehouseSources.id, id));
}

export async function insertRun(db: Executor, values: RunInsert): Promise<WarehouseRunRow> {
  const [row] = await db.insert(warehouseRuns).values(values).returning();
  return row;
}

export async function findRun(db: Executor, id: string): Promise<WarehouseRunRow | undefined> {
  const [row] = await db.select().from(warehouseRuns).where(eq(warehouseRuns.id, id));
  return row;
}

export const listExperimentRuns = (db: Executor, experimentId: string, skip: number, limit: number) =>
  db
    .select()
    .from(warehouseRuns)
    .where(and(eq(warehouseRuns.experimentId, experimentId), eq(warehouseRuns.kind, 'analysis')))
    .orderBy(desc(warehouseRuns.createdAt), desc(warehouseRuns.id))
    .offset(skip)
    .limit(limit);

export async function hasActiveRun(db: Executor, connectionId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: warehouseRuns.id })
    .from(warehouseRuns)
    .where(and(eq(warehouseRuns.connectionId, connectionId), inArray(warehouseRuns.status, ['queued', 'running'])))
    .limit(1);
  return row !== undefined;
}

/** Analyses and previews started on a connection since `since` (whatever their outcome: spec limits). */
export async function countRunsSince(db: Executor, connectionId: string, since: Date): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(warehouseRuns)
    .where(and(eq(warehouseRuns.connectionId, connectionId), gte(warehouseRuns.createdAt, since)));
  return row.n;
}

export async function ensureSlots(db: Executor, slots: number): Promise<void> {
  await db
    .insert(warehouseRunSlots)
    .values(Array.from({ length: slots }, (_, i) => ({ slot: i + 1 })))
    .onConflictDoNothing();
}

/** A free slot among the first `limit`, skipping slots another worker is claiming right now. */
export async function lockFreeSlot(db: Executor, limit: number): Promise<number | undefined> {
  const [row] = await db
    .select({ slot: warehouseRunSlots.slot })
    .from(warehouseRunSlots)
    .where(and(isNull(warehouseRunSlots.runId), lte(warehouseRunSlots.slot, limit)))
    .orderBy(warehouseRunSlots.slot)
    .limit(1)
    .for('update', { skipLocked: true });
  return row?.slot;
}

/** The oldest queued run no other worker is claiming. */
export async function lockNextQueued(db: Executor): Promise<WarehouseRunRow | undefined> {
  const [row] = await db
    .select()
    .from(warehouseRuns)
    .where(eq(warehouseRuns.status, 'queued'))
    .orderBy(warehouseRuns.createdAt)
    .limit(1)
    .for('update', { skipLocked: true });
  return row;
}

export async function takeSlot(db: Executor, slot: number, runId: string): Promise<void> {
  await db.update(warehouseRunSlots).set({ runId }).where(eq(warehouseRunSlots.slot, slot));
}

export async function releaseSlot(db: Executor, runId: string): Promise<void> {
  await db.update(warehouseRunSlots).set({ runId: null }).where(eq(warehouseRunSlots.runId, runId));
}

export async function updateRun(db: Executor, id: string, values: Partial<RunInsert>): Promise<WarehouseRunRow> {
  const [row] = await db.update(warehouseRuns).set(values).where(eq(warehouseRuns.id, id)).returning();
  return row;
}

/** Running runs whose worker stopped renewing the lease (its process ended): failed, slots freed. */
export async function failExpiredRuns(db: Executor, now: Date, errorCode: string, message: string): Promise<string[]> {
  const rows = await db
    .update(warehouseRuns)
    .set({ status: 'failed', errorCode, errorMessage: message, finishedAt: now, leaseExpiresAt: null })
    .where(and(eq(warehouseRuns.status, 'running'), sql`${warehouseRuns.leaseExpiresAt} < ${now.toISOString()}`))
    .returning({ id: warehouseRuns.id });
  await db.execute(
    sql`UPDATE ${warehouseRunSlots} SET run_id = NULL
        WHERE run_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${warehouseRuns} r WHERE r.id = run_id AND r.status = 'running')`,
  );
  return rows.map((r) => r.id);
}

