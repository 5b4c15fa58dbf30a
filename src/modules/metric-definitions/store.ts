import { and, arrayContains, asc, eq, getTableColumns, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { afterCursor, inPeriod, storedText, STREAM_PAGE_SIZE, type CreatedPeriod, type Cursor } from '../../db/paging.js';
import { metricDefinitions, type MetricDefinitionRow, type MetricKind } from '../../db/schema/metric-definitions.js';

export type MetricDefinitionInsert = typeof metricDefinitions.$inferInsert;

export async function insertDefinition(db: Executor, values: MetricDefinitionInsert): Promise<MetricDefinitionRow> {
  const [row] = await db.insert(metricDefinitions).values(values).returning();
  return row;
}

export async function findDefinition(db: Executor, id: string): Promise<MetricDefinitionRow | undefined> {
  const [row] = await db.select().from(metricDefinitions).where(eq(metricDefinitions.id, id));
  return row;
}

/** Row lock: edits and the delete of one definition take turns, and a delete waits for writes that reference it. */
export async function findDefinitionForUpdate(db: Executor, id: string): Promise<MetricDefinitionRow | undefined> {
  const [row] = await db.select().from(metricDefinitions).where(eq(metricDefinitions.id, id)).for('update');
  return row;
}

/**
 * Shared row locks on the definitions an experiment or a rollout schedule's guardrails are about to reference, with
 * their kinds: a concurrent delete (which takes the row
 * for update) waits for the referencing write to commit and then sees it, or the write finds the definition gone.
 */
export async function existingIdsForShare(db: Executor, ids: string[]): Promise<Map<string, MetricKind>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: metricDefinitions.id, kind: metricDefinitions.kind })
    .from(metricDefinitions)
    .where(inArray(metricDefinitions.id, ids))
    .orderBy(metricDefinitions.id)
    .for('share');
  return new Map(rows.map((r) => [r.id, r.kind]));
}

export async function nameTaken(db: Executor, name: string, exceptId?: string): Promise<boolean> {
  const [row] = await db.select({ id: metricDefinitions.id }).from(metricDefinitions).where(eq(metricDefinitions.name, name));
  return row !== undefined && row.id !== exceptId;
}

export function listDefinitions(
  db: Executor,
  opts: { kind?: MetricKind; tag?: string; skip: number; limit: number },
): Promise<MetricDefinitionRow[]> {
  return db
    .select()
    .from(metricDefinitions)
    .where(
      and(
        opts.kind ? eq(metricDefinitions.kind, opts.kind) : undefined,
        opts.tag ? arrayContains(metricDefinitions.tags, [opts.tag]) : undefined,
      ),
    )
    .orderBy(asc(metricDefinitions.name), asc(metricDefinitions.id))
    .offset(opts.skip)
    .limit(opts.limit);
}

export async function updateDefinition(db: Executor, id: string, values: Partial<MetricDefinitionInsert>): Promise<MetricDefinitionRow> {
  const [row] = await db.update(metricDefinitions).set(values).where(eq(metricDefinitions.id, id)).returning();
  return row;
}

export async function deleteDefinition(db: Executor, id: string): Promise<void> {
  await db.delete(metricDefinitions).where(eq(metricDefinitions.id, id));
}

export async function findDefinitions(db: Executor, ids: string[]): Promise<MetricDefinitionRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(metricDefinitions).where(inArray(metricDefinitions.id, ids));
}

/** For export: one page of definitions created in the period, in (created_at, id) order, with their times as stored. */
export function exportPage(db: Executor, period: CreatedPeriod, cursor?: Cursor) {
  return db
    .select({ ...getTableColumns(metricDefinitions), createdText: storedText(metricDefinitions.createdAt), updatedText: storedText(metricDefinitions.updatedAt) })
    .from(metricDefinitions)
    .where(and(inPeriod(metricDefinitions.createdAt, period), afterCursor(metricDefinitions.createdAt, metricDefinitions.id, cursor)))
    .orderBy(asc(metricDefinitions.createdAt), asc(metricDefinitions.id))
    .limit(STREAM_PAGE_SIZE);
}
