import { and, asc, count, desc, eq, gt, gte, inArray, lte, notExists, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Executor } from '../../db/client.js';
import { auditLogs, auditLogSeals, auditLogUnsealed, type AuditLogRow } from '../../db/schema/audit-logs.js';

export interface EntryFilter {
  actorId?: string;
  action?: string;
  entityType?: string;
  entityId?: string;
  from?: Date;
  to?: Date;
}

function where(filter: EntryFilter): SQL | undefined {
  return and(
    filter.actorId ? eq(auditLogs.actorId, filter.actorId) : undefined,
    filter.action ? eq(auditLogs.action, filter.action) : undefined,
    filter.entityType ? eq(auditLogs.entityType, filter.entityType) : undefined,
    filter.entityId ? eq(auditLogs.entityId, filter.entityId) : undefined,
    filter.from ? gte(auditLogs.createdAt, filter.from) : undefined,
    filter.to ? lte(auditLogs.createdAt, filter.to) : undefined,
  );
}

export type EntryWithSequence = AuditLogRow & { sequence: number | null };

/** Newest first; sequence is null until the entry is sealed. */
export async function listEntries(db: Executor, filter: EntryFilter, skip: number, limit: number) {
  const rows = await db
    .select({ entry: auditLogs, sequence: auditLogSeals.sequence })
    .from(auditLogs)
    .leftJoin(auditLogSeals, eq(auditLogSeals.auditLogId, auditLogs.id))
    .where(where(filter))
    .orderBy(desc(auditLogs.createdAt), desc(auditLogs.id))
    .offset(skip)
    .limit(limit);
  const [{ total }] = await db.select({ total: count() }).from(auditLogs).where(where(filter));
  return { rows: rows.map((r): EntryWithSequence => ({ ...r.entry, sequence: r.sequence })), total };
}

export async function countBy(db: Executor, column: 'action' | 'entityType', filter: EntryFilter) {
  const key = auditLogs[column];
  return db
    .select({ key, count: count() })
    .from(auditLogs)
    .where(where(filter))
    .groupBy(key)
    .orderBy(desc(count()), asc(key));
}

export async function topActors(db: Executor, filter: EntryFilter, limit: number) {
  return db
    .select({ actorId: auditLogs.actorId, actorUsername: sql<string | null>`max(${auditLogs.actorUsername})`, count: count() })
    .from(auditLogs)
    .where(where(filter))
    .groupBy(auditLogs.actorId)
    .orderBy(desc(count()), asc(auditLogs.actorId))
    .limit(limit);
}

export async function countPerDay(db: Executor, filter: EntryFilter) {
  const day = sql<string>`to_char(${auditLogs.createdAt} AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
  return db.select({ day, count: count() }).from(auditLogs).where(where(filter)).groupBy(day).orderBy(day);
}

// Sealing --------------------------------------------------------------------------------------------------------

/** Held until the sealing transaction ends: one sealer at a time, so sequence order is commit order. */
export async function lockSealing(tx: Executor): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('uplift.audit_seal.' || current_schema()))`);
}

export function unsealedEntries(tx: Executor, limit: number): Promise<AuditLogRow[]> {
  return tx
    .select(entryColumns())
    .from(auditLogUnsealed)
    .innerJoin(auditLogs, eq(auditLogs.id, auditLogUnsealed.auditLogId))
    .orderBy(asc(auditLogs.createdAt), asc(auditLogs.id))
    .limit(limit);
}

function entryColumns() {
  return {
    id: auditLogs.id,
    actorId: auditLogs.actorId,
    actorUsername: auditLogs.actorUsername,
    action: auditLogs.action,
    entityType: auditLogs.entityType,
    entityId: auditLogs.entityId,
    before: auditLogs.before,
    after: auditLogs.after,
    details: auditLogs.details,
    createdAt: auditLogs.createdAt,
  };
}

export async function lastSeal(tx: Executor) {
  const [row] = await tx
    .select({ sequence: auditLogSeals.sequence, signature: auditLogSeals.signature })
    .from(auditLogSeals)
    .orderBy(desc(auditLogSeals.sequence))
    .limit(1);
  return row;
}

export async function insertSeals(tx: Executor, seals: (typeof auditLogSeals.$inferInsert)[]): Promise<void> {
  await tx.insert(auditLogSeals).values(seals);
}

export async function dequeue(tx: Executor, ids: string[]): Promise<void> {
  await tx.delete(auditLogUnsealed).where(inArray(auditLogUnsealed.auditLogId, ids));
}

/** Queue rows whose entry was deleted before it was sealed. */
export async function dropOrphans(tx: Executor): Promise<void> {
  await tx
    .delete(auditLogUnsealed)
    .where(notExists(tx.select({ one: sql`1` }).from(auditLogs).where(eq(auditLogs.id, auditLogUnsealed.auditLogId))));
}

export async function headSequence(db: Executor): Promise<number> {
  const [row] = await db.select({ head: sql<string | null>`max(${auditLogSeals.sequence})` }).from(auditLogSeals);
  return Number(row?.head ?? 0);
}

// Sealed entries (stream and compliance) ---------------------------------------------------------------------------

const previous = alias(auditLogSeals, 'previous');

export interface SealedEntry {
  entry: AuditLogRow;
  sequence: number;
  signature: string;
  previousSignature: string | null;
  /** The signature stored at sequence - 1: null when there is none to expect (sequence 1). */
  predecessorSignature: string | null | undefined;
}

function sealedQuery(db: Executor) {
  return db
    .select({
      entry: entryColumns(),
      sequence: auditLogSeals.sequence,
      signature: auditLogSeals.signature,
      previousSignature: auditLogSeals.previousSignature,
      predecessorSignature: previous.signature,
    })
    .from(auditLogSeals)
    .innerJoin(auditLogs, eq(auditLogs.id, auditLogSeals.auditLogId))
    .leftJoin(previous, eq(previous.sequence, sql`${auditLogSeals.sequence} - 1`));
}

function toSealed(row: Awaited<ReturnType<typeof sealedQuery>>[number]): SealedEntry {
  return {
    ...row,
    predecessorSignature: row.predecessorSignature ?? (row.sequence === 1 ? null : undefined),
  };
}

/** Sealed entries with after < sequence <= upTo, in sequence order. */
export async function sealedBetween(db: Executor, after: number, upTo: number, filter: EntryFilter, limit: number): Promise<SealedEntry[]> {
  const rows = await sealedQuery(db)
    .where(and(gt(auditLogSeals.sequence, after), lte(auditLogSeals.sequence, upTo), where(filter)))
    .orderBy(asc(auditLogSeals.sequence))
    .limit(limit);
  return rows.map(toSealed);
}

/** Newest first, with the total of matching sealed entries. */
export async function sealedPage(db: Executor, filter: EntryFilter, offset: number, limit: number) {
  const rows = await sealedQuery(db).where(where(filter)).orderBy(desc(auditLogSeals.sequence)).offset(offset).limit(limit);
  const [{ total }] = await db
    .select({ total: count() })
    .from(auditLogSeals)
    .innerJoin(auditLogs, eq(auditLogs.id, auditLogSeals.auditLogId))
    .where(where(filter));
  return { rows: rows.map(toSealed), total };
}
