import { boolean, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/** Workspaces; the migration creates the default one, whose members are every account. */
export const workspaces = pgTable(
  'workspaces',
  {
    id: uuid().primaryKey(),
    name: text().notNull(),
    slug: text().notNull(),
    isDefault: boolean().notNull().default(false),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('workspaces_slug_key').on(t.slug)],
);
export type WorkspaceRow = typeof workspaces.$inferSelect;
