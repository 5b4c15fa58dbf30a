import { bigint, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Real-time per-experiment counters (Postgres store; Redis holds them when configured). */
export const experimentCounters = pgTable(
  'experiment_counters',
  {
    experimentId: uuid().notNull(),
    name: text().notNull(),
    value: bigint({ mode: 'number' }).notNull().default(0),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.experimentId, t.name] })],
);
