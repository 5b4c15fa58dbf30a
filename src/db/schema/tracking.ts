import { doublePrecision, index, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { experiments } from './experiments.js';

/** Sticky assignments: one row per (experiment, user), forever. */
export const assignments = pgTable(
  'assignments',
  {
    id: uuid().primaryKey(),
    experimentId: uuid().notNull().references(() => experiments.id, { onDelete: 'cascade' }),
    variantId: uuid().notNull(),
    userId: text().notNull(),
    context: jsonb().$type<Record<string, unknown>>(),
    source: text().$type<'assign' | 'batch'>().notNull().default('assign'),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // INCLUDE (variant_id, created_at) in migration 0015: the results' merge join reads it index-only.
    uniqueIndex('assignments_experiment_user_key').on(t.experimentId, t.userId),
    // A hash index since migration 0016: equality lookups only, never a scan in user order.
    index('assignments_user_idx').using('hash', t.userId),
    index('assignments_experiment_variant_idx').on(t.experimentId, t.variantId, t.createdAt),
  ],
);

/**
 * Tracking events and view events. Partitioned by month on created_at in the migration (Drizzle does not declare
 * partitioning); the scheduler creates partitions ahead and a DEFAULT partition catches anything beyond them.
 * No foreign keys: an RI check per row would lock the experiment row for every insert; deleting a flag or a draft
 * experiment detaches its events through the tracking service instead. Indexes are in the migrations only
 * (events_experiment_idx carries INCLUDE columns since 0015, for the results' index-only pass; events_user_idx is a
 * hash index since 0016, for equality lookups only; the partial
 * events_experiment_time_idx of 0034 holds the tracked events in (experiment, time) order, for results windows and the
 * exposure check).
 */
export const events = pgTable(
  'events',
  {
    id: uuid().notNull(),
    eventName: text().notNull(),
    userId: text(),
    experimentId: uuid(),
    featureFlagId: uuid(),
    variantId: uuid(),
    value: doublePrecision(),
    metadata: jsonb().$type<Record<string, unknown>>(),
    kind: text().$type<'track' | 'view'>().notNull().default('track'),
    createdAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.id, t.createdAt] })],
);
