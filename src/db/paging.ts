import { and, sql, type AnyColumn, type SQL } from 'drizzle-orm';

/**
 * Keyset paging by (created_at, id) and created_at period filters, shared by the read models that stream large
 * listings (export): each owning module pages its own table with these, in constant memory.
 */
export const STREAM_PAGE_SIZE = 500;

/** Bounds on created_at as text, compared by the database at its own microsecond precision. */
export interface CreatedPeriod {
  /** created_at >= start */
  start: string | null;
  /** created_at <= endInclusive */
  endInclusive: string | null;
  /** created_at < endExclusive */
  endExclusive: string | null;
}

/** A page ends at this row; the next page starts after it. created_at travels as text to keep its microseconds. */
export interface Cursor {
  createdAt: string;
  id: string;
}

/** A timestamp as stored, in UTC and without an offset, e.g. 2024-05-01T13:59:59.123456. */
export const storedText = (column: AnyColumn) => sql<string>`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`;

export function inPeriod(column: AnyColumn, period: CreatedPeriod): SQL | undefined {
  return and(
    period.start ? sql`${column} >= ${period.start}::timestamptz` : undefined,
    period.endInclusive ? sql`${column} <= ${period.endInclusive}::timestamptz` : undefined,
    period.endExclusive ? sql`${column} < ${period.endExclusive}::timestamptz` : undefined,
  );
}

export function afterCursor(createdAt: AnyColumn, id: AnyColumn, cursor: Cursor | undefined): SQL | undefined {
  return cursor ? sql`(${createdAt}, ${id}) > ((${cursor.createdAt}::timestamp AT TIME ZONE 'UTC'), ${cursor.id}::uuid)` : undefined;
}
