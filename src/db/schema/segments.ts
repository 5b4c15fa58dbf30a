import { index, integer, json, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.js';

export const SEGMENT_KINDS = ['rules', 'id_list'] as const;
export type SegmentKind = (typeof SEGMENT_KINDS)[number];
export const SEGMENT_STATUSES = ['active', 'inactive', 'archived'] as const;
export type SegmentStatus = (typeof SEGMENT_STATUSES)[number];

/**
 * Audience segments. `rules` is `json`, not `jsonb`: the spec returns rules exactly as sent, and jsonb would reorder
 * keys. `member_count` is kept in the transaction that changes the members (id_list segments), so GET by id and the
 * 1,000,000 cap never count the members table.
 */
export const segments = pgTable(
  'segments',
  {
    id: uuid().primaryKey(),
    name: text().notNull(),
    description: text(),
    kind: text().$type<SegmentKind>().notNull().default('rules'),
    rules: json().$type<unknown>(),
    status: text().$type<SegmentStatus>().notNull().default('active'),
    memberCount: integer().notNull().default(0),
    ownerId: uuid().references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('segments_status_idx').on(t.status, t.createdAt), index('segments_owner_id_idx').on(t.ownerId)],
);

/** Ids of an id_list segment; the primary key is the B-tree that keeps a membership check O(log n). */
export const segmentMembers = pgTable(
  'segment_members',
  {
    segmentId: uuid().notNull().references(() => segments.id, { onDelete: 'cascade' }),
    memberId: text().notNull(),
  },
  (t) => [primaryKey({ name: 'segment_members_pkey', columns: [t.segmentId, t.memberId] })],
);

export type SegmentRow = typeof segments.$inferSelect;
