import { index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { environments } from './environments.js';
import { users } from './users.js';

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid().primaryKey(),
    userId: uuid().notNull().references(() => users.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    keyHash: text().notNull(),
    keyPrefix: text().notNull(),
    scopes: jsonb().$type<string[]>().notNull().default([]),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    /** Past this instant the key authenticates nowhere; null never expires. */
    expiresAt: timestamp({ withTimezone: true }),
    /** When the key last authenticated, to the minute (written at most once a minute per key). */
    lastUsedAt: timestamp({ withTimezone: true }),
    /** The environment every evaluation with the key answers in. */
    environment: text().notNull().references(() => environments.key, { onDelete: 'restrict' }),
  },
  (t) => [uniqueIndex('api_keys_key_hash_key').on(t.keyHash), index('api_keys_user_id_idx').on(t.userId), index('api_keys_environment_idx').on(t.environment)],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;
