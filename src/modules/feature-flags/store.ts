import { and, arrayContains, asc, desc, eq, ilike, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { containsPattern } from '../../db/errors.js';
import { featureFlags, type FeatureFlagRow } from '../../db/schema/feature-flags.js';
import type { FlagStatus } from './domain.js';
import { afterCursor, inPeriod, storedText, STREAM_PAGE_SIZE, type CreatedPeriod, type Cursor } from '../../db/paging.js';

export async function insertFlag(db: Executor, values: typeof featureFlags.$inferInsert): Promise<FeatureFlagRow> {
  const [row] = await db.insert(featureFlags).values(values).returning();
  return row;
}

export async function findFlag(db: Executor, id: string): Promise<FeatureFlagRow | undefined> {
  const [row] = await db.select().from(featureFlags).where(eq(featureFlags.id, id));
  return row;
}

/** Row lock: concurrent changes of one flag take turns, so each audit entry's "before" is what it replaced. */
export async function findFlagForUpdate(db: Executor, id: string): Promise<FeatureFlagRow | undefined> {
  const [row] = await db.select().from(featureFlags).where(eq(featureFlags.id, id)).for('update');
  return row;
}

export async function updateFlag(db: Executor, id: string, values: Partial<typeof featureFlags.$inferInsert>): Promise<FeatureFlagRow> {
  const [row] = await db.update(featureFlags).set(values).where(eq(featureFlags.id, id)).returning();
  return row;
}

export async function deleteFlag(db: Executor, id: string): Promise<void> {
  await db.delete(featureFlags).where(eq(featureFlags.id, id));
}

export async function listFlags(
  db: Executor,
  opts: { status?: FlagStatus; search?: string; skip: number; limit: number },
): Promise<{ rows: FeatureFlagRow[]; total: number }> {
  const filters: SQL[] = [];
  if (opts.status) filters.push(eq(featureFlags.status, opts.status));
  if (opts.search) {
    const pattern = containsPattern(opts.search);
    filters.push(or(ilike(featureFlags.name, pattern), ilike(featureFlags.key, pattern))!);
  }
  const where = filters.length ? and(...filters) : undefined;
  const rows = await db
    .select()
    .from(featureFlags)
    .where(where)
    .orderBy(desc(featureFlags.createdAt), desc(featureFlags.id))
    .offset(opts.skip)
    .limit(opts.limit);
  const [{ count }] = await db.select({ count: sql<number>`count(*)::int` }).from(featureFlags).where(where);
  return { rows, total: count };
}

/** Every flag, for the compiled in-memory ruleset (one query per rebuild, none per evaluation). */
export function allFlags(db: Executor): Promise<FeatureFlagRow[]> {
  return db.select().from(featureFlags).orderBy(featureFlags.key);
}

/** Flags whose rules name the segment (GIN index on segment_ids). */
export function flagsNamingSegment(db: Executor, segmentId: string) {
  return db
    .select({ id: featureFlags.id, key: featureFlags.key, name: featureFlags.name, status: featureFlags.status })
    .from(featureFlags)
    .where(arrayContains(featureFlags.segmentIds, [segmentId]))
    .orderBy(featureFlags.key);
}

/** Read model for export: one page of flags created in the period, in (created_at, id) order, times as stored. */
export function exportPage(db: Executor, period: CreatedPeriod, cursor?: Cursor) {
  return db
    .select({
      id: featureFlags.id,
      key: featureFlags.key,
      name: featureFlags.name,
      status: featureFlags.status,
      rolloutPercentage: featureFlags.rolloutPercentage,
      valueType: featureFlags.valueType,
      variations: featureFlags.variations,
      defaultVariation: featureFlags.defaultVariation,
      offVariation: featureFlags.offVariation,
      variationRules: featureFlags.variationRules,
      variationSplit: featureFlags.variationSplit,
      createdAt: storedText(featureFlags.createdAt),
      updatedAt: storedText(featureFlags.updatedAt),
    })
    .from(featureFlags)
    .where(and(inPeriod(featureFlags.createdAt, period), afterCursor(featureFlags.createdAt, featureFlags.id, cursor)))
    .orderBy(asc(featureFlags.createdAt), asc(featureFlags.id))
    .limit(STREAM_PAGE_SIZE);
}

/** Spec export rule 4: flags created in the period, and how many of them are active. */
export async function periodSummary(db: Executor, period: CreatedPeriod) {
  const [row] = await db
    .select({ total: sql<number>`count(*)::int`, active: sql<number>`count(*) FILTER (WHERE ${featureFlags.status} = 'ACTIVE')::int` })
    .from(featureFlags)
    .where(inPeriod(featureFlags.createdAt, period));
  return row;
}
