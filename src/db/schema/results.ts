import { bigint, boolean, date, doublePrecision, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { experiments } from './experiments.js';

/**
 * Results rollups: derived data, maintained incrementally from assignments and events so that computing results
 * reads only what arrived since the last refresh (docs/statistics.md, "Rollups"). Each stream of an experiment
 * (its assignments, or one metric's event name) has a watermark: every row of the stream with created_at at or
 * before it is in the rollup, nothing after it is.
 */
export const resultWatermarks = pgTable(
  'result_watermarks',
  {
    experimentId: uuid().notNull().references(() => experiments.id, { onDelete: 'cascade' }),
    /** `assignments`, or `metric:<event_name>`. */
    stream: text().notNull(),
    /** null until the first refresh. */
    rolledUpTo: timestamp({ withTimezone: true }),
    /** Metric streams: whether the rollup holds the value columns (a first computation for conversion and count metrics only leaves them out). */
    withValues: boolean().notNull().default(true),
  },
  (t) => [primaryKey({ columns: [t.experimentId, t.stream] })],
);

/** Assigned users per variant and UTC day of assignment. */
export const resultAssignmentDays = pgTable(
  'result_assignment_days',
  {
    experimentId: uuid().notNull().references(() => experiments.id, { onDelete: 'cascade' }),
    variantId: uuid().notNull(),
    day: date({ mode: 'string' }).notNull(),
    users: bigint({ mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.experimentId, t.variantId, t.day] })],
);

/**
 * Per variant and UTC day, what that day's events added to the variant's sufficient statistics: users converting
 * for the first time, events, value, and the growth of the sums of squares of per-user totals (so that summing the
 * days up to d gives the statistics as of the end of d, for the whole experiment and for daily results alike).
 */
export const resultVariantDays = pgTable(
  'result_variant_days',
  {
    experimentId: uuid().notNull().references(() => experiments.id, { onDelete: 'cascade' }),
    eventName: text().notNull(),
    variantId: uuid().notNull(),
    day: date({ mode: 'string' }).notNull(),
    converters: bigint({ mode: 'number' }).notNull(),
    eventCount: bigint({ mode: 'number' }).notNull(),
    countSquareDelta: doublePrecision().notNull(),
    valueSum: doublePrecision().notNull(),
    valueSquareDelta: doublePrecision().notNull(),
  },
  (t) => [primaryKey({ columns: [t.experimentId, t.eventName, t.variantId, t.day] })],
);

/** Assigned users per scalar top-level assignment-context value and variant (SRM diagnosis), with the assignments stream. */
export const resultContextValues = pgTable(
  'result_context_values',
  {
    experimentId: uuid().notNull().references(() => experiments.id, { onDelete: 'cascade' }),
    attribute: text().notNull(),
    value: text().notNull(),
    variantId: uuid().notNull(),
    users: bigint({ mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.experimentId, t.attribute, t.value, t.variantId] })],
);

/** Context attributes with more distinct values than the diagnosis keeps: no longer rolled up. */
export const resultContextOverLimit = pgTable(
  'result_context_over_limit',
  {
    experimentId: uuid().notNull().references(() => experiments.id, { onDelete: 'cascade' }),
    attribute: text().notNull(),
  },
  (t) => [primaryKey({ columns: [t.experimentId, t.attribute] })],
);

/** Assigned users with a tracked event naming another variant than their assignment: excluded from the analysis. */
export const resultExcludedUsers = pgTable(
  'result_excluded_users',
  {
    experimentId: uuid().notNull().references(() => experiments.id, { onDelete: 'cascade' }),
    userId: text().notNull(),
    variantId: uuid().notNull(),
    firstSeen: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.experimentId, t.userId] })],
);

/** The SRM auto-pause opt-in of an experiment, and what the results-rollup job last did about a mismatch. */
export const resultSrmState = pgTable('result_srm_state', {
  experimentId: uuid().primaryKey().references(() => experiments.id, { onDelete: 'cascade' }),
  autoPause: boolean().notNull().default(false),
  updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  alertedAt: timestamp({ withTimezone: true }),
  autoPausedAt: timestamp({ withTimezone: true }),
  alertPValue: doublePrecision(),
});

/**
 * Each user's counted totals of a metric event as of the metric stream's watermark (no row: none), so that a window
 * reads its own events and one row per user of them, not the users' history.
 */
export const resultUserTotals = pgTable(
  'result_user_totals',
  {
    experimentId: uuid().notNull().references(() => experiments.id, { onDelete: 'cascade' }),
    eventName: text().notNull(),
    userId: text().notNull(),
    eventCount: bigint({ mode: 'number' }).notNull(),
    valueSum: doublePrecision().notNull(),
  },
  (t) => [primaryKey({ columns: [t.experimentId, t.eventName, t.userId] })],
);
