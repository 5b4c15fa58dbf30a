import { sql } from 'drizzle-orm';
import { boolean, doublePrecision, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.js';

/** The global holdout: at most one is active (partial unique index), the others are kept for history. */
export const holdouts = pgTable(
  'holdouts',
  {
    id: uuid().primaryKey(),
    name: text().notNull(),
    description: text(),
    percentage: doublePrecision().notNull(),
    isActive: boolean().notNull().default(true),
    createdById: uuid().references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('holdouts_one_active').on(t.isActive).where(sql`is_active`)],
);

export type HoldoutRow = typeof holdouts.$inferSelect;
