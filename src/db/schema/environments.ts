import { sql } from 'drizzle-orm';
import { boolean, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/**
 * Environments (development, staging, production, ...). The migration creates `production` as the default; exactly
 * one environment is the default (the partial unique index keeps it at most one, the service never leaves none).
 */
export const environments = pgTable(
  'environments',
  {
    key: text().primaryKey(),
    name: text().notNull(),
    description: text(),
    color: text(),
    sortOrder: integer().notNull().default(0),
    isDefault: boolean().notNull().default(false),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('environments_one_default').on(t.isDefault).where(sql`is_default`)],
);
export type EnvironmentRow = typeof environments.$inferSelect;
