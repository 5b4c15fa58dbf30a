import { bigserial, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { experiments } from './experiments.js';
import { users } from './users.js';

export const MUTEX_GROUP_STATUSES = ['active', 'inactive', 'archived'] as const;
export type MutexGroupStatus = (typeof MUTEX_GROUP_STATUSES)[number];

export const mutualExclusionGroups = pgTable('mutual_exclusion_groups', {
  id: uuid().primaryKey(),
  name: text().notNull(),
  description: text(),
  status: text().$type<MutexGroupStatus>().notNull().default('active'),
  /** Percentage of the group's users per experiment id; null splits users evenly among the members. */
  trafficAllocation: jsonb().$type<Record<string, number>>(),
  createdById: uuid().references(() => users.id, { onDelete: 'set null' }),
  createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
});

export const mutualExclusionMembers = pgTable(
  'mutual_exclusion_members',
  {
    groupId: uuid().notNull().references(() => mutualExclusionGroups.id, { onDelete: 'cascade' }),
    experimentId: uuid().notNull().references(() => experiments.id, { onDelete: 'cascade' }),
    addedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    /** Joining order, which lays out the members' shares of the group's users (mutexSlot). */
    seq: bigserial({ mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.experimentId] }), index('mutual_exclusion_members_experiment_idx').on(t.experimentId)],
);

export type MutexGroupRow = typeof mutualExclusionGroups.$inferSelect;
