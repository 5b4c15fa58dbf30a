import { jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { experiments } from './experiments.js';

/** Current bandit allocation per experiment: weights by variant id. */
export const banditStates = pgTable('bandit_states', {
  experimentId: uuid().primaryKey().references(() => experiments.id, { onDelete: 'cascade' }),
  weights: jsonb().$type<Record<string, number>>().notNull(),
  source: text().$type<'thompson' | 'manual' | 'initial'>().notNull(),
  engineVersion: text().notNull(),
  updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
});
