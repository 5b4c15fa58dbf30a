import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import { queryRows, type Executor } from '../../db/client.js';
import { segmentMembers, segments, type SegmentRow, type SegmentStatus } from '../../db/schema/segments.js';

export async function insertSegment(db: Executor, values: typeof segments.$inferInsert): Promise<SegmentRow> {
  const [row] = await db.insert(segments).values(values).returning();
  return row;
}

export async function findSegment(db: Executor, id: string): Promise<SegmentRow | undefined> {
  const [row] = await db.select().from(segments).where(eq(segments.id, id));
  return row;
}

/** Row lock: status changes, rule changes and member changes of one segment take turns. */
export async function findSegmentForUpdate(db: Executor, id: string): Promise<SegmentRow | undefined> {
  const [row] = await db.select().from(segments).where(eq(segments.id, id)).for('update');
  return row;
}

export function findSegments(db: Executor, ids: string[]): Promise<SegmentRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.select().from(segments).where(inArray(segments.id, ids));
}

/**
 * Shared row locks on the segments a flag or experiment is about to reference: a concurrent archive (which takes
 * the row for update) waits for the referencing write to commit and then sees it, or the write sees the archive.
 */
export function findSegmentsForShare(db: Executor, ids: string[]): Promise<SegmentRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.select().from(segments).where(inArray(segments.id, ids)).orderBy(segments.id).for('share');
}

export function listSegments(db: Executor, opts: { status?: SegmentStatus; skip: number; limit: number }): Promise<SegmentRow[]> {
  return db
    .select()
    .from(segments)
    .where(opts.status ? eq(segments.status, opts.status) : undefined)
    .orderBy(desc(segments.createdAt), desc(segments.id))
    .offset(opts.skip)
    .limit(opts.limit);
}

export async function updateSegment(db: Executor, id: string, values: Partial<typeof segments.$inferInsert>): Promise<SegmentRow> {
  const [row] = await db.update(segments).set(values).where(eq(segments.id, id)).returning();
  return row;
}

/** One statement for up to 10,000 ids: the ids travel as one JSON parameter, existing members are skipped. */
export async function insertMembers(db: Executor, segmentId: string, memberIds: string[]): Promise<number> {
  const rows = await queryRows<{ member_id: string }>(db, sql`
    INSERT INTO segment_members (segment_id, member_id)
    SELECT ${segmentId}::uuid, ids.value FROM jsonb_array_elements_text(${JSON.stringify(memberIds)}::jsonb) AS ids(value)
    ON CONFLICT DO NOTHING
    RETURNING member_id`);
  return rows.length;
}

export async function deleteMembers(db: Executor, segmentId: string, memberIds: string[]): Promise<number> {
  const rows = await queryRows<{ member_id: string }>(db, sql`
    DELETE FROM segment_members
    WHERE segment_id = ${segmentId}::uuid
      AND member_id IN (SELECT value FROM jsonb_array_elements_text(${JSON.stringify(memberIds)}::jsonb))
    RETURNING member_id`);
  return rows.length;
}

/** Which of these segments hold the member: one primary-key probe per segment. */
export async function segmentsHoldingMember(db: Executor, memberId: string, segmentIds: string[]): Promise<string[]> {
  if (segmentIds.length === 0) return [];
  const rows = await db
    .select({ segmentId: segmentMembers.segmentId })
    .from(segmentMembers)
    .where(and(inArray(segmentMembers.segmentId, segmentIds), eq(segmentMembers.memberId, memberId)));
  return rows.map((r) => r.segmentId);
}
