import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { Role } from '../../platform/roles.js';

export const users = pgTable(
  'users',
  {
    id: uuid().primaryKey(),
    username: text().notNull(),
    email: text(),
    hashedPassword: text(),
    fullName: text(),
    role: text().$type<Role>(),
    isActive: boolean().notNull().default(true),
    isSuperuser: boolean().notNull().default(false),
    lastLogin: timestamp({ withTimezone: true }),
    preferences: jsonb().$type<Record<string, unknown>>(),
    externalId: text(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('users_username_key').on(t.username),
    uniqueIndex('users_email_lower_key').on(sql`lower(${t.email})`),
    uniqueIndex('users_external_id_key').on(t.externalId),
    index('users_created_at_idx').on(t.createdAt),
  ],
);

export type UserRow = typeof users.$inferSelect;
