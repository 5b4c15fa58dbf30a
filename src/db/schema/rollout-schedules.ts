import { sql } from 'drizzle-orm';
import { boolean, doublePrecision, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { environments } from './environments.js';
import { featureFlags } from './feature-flags.js';
import { users } from './users.js';

export interface StoredGuardrails {
  /** Each either an event guardrail (event_name) or a metric library one (metric_definition_id). */
  metrics: Array<{ event_name?: string; metric_definition_id?: string; direction: 'lower_is_better' | 'higher_is_better' }>;
  confidence: number;
  rollback_percentage: number;
}

export const ROLLOUT_SCHEDULE_STATUSES = ['draft', 'active', 'paused', 'completed', 'cancelled'] as const;
export type RolloutScheduleStatus = (typeof ROLLOUT_SCHEDULE_STATUSES)[number];

/**
 * A flag's staged rollout. At most one schedule per flag is `active` (partial unique index): two running schedules
 * would overwrite each other's percentages. The owner's account may be deleted; the schedule stays (spec, user rule 8).
 */
export const rolloutSchedules = pgTable(
  'rollout_schedules',
  {
    id: uuid().primaryKey(),
    flagId: uuid().notNull().references(() => featureFlags.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    description: text(),
    status: text().$type<RolloutScheduleStatus>().notNull().default('draft'),
    ownerId: uuid().references(() => users.id, { onDelete: 'set null' }),
    /** Guarded rollout settings (null: not guarded). */
    guardrails: jsonb().$type<StoredGuardrails>(),
    /** The environment whose rollout the schedule moves (null: the default environment). */
    environment: text().references(() => environments.key, { onDelete: 'cascade' }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('rollout_schedules_flag_idx').on(t.flagId, t.createdAt),
    index('rollout_schedules_status_idx').on(t.status),
    index('rollout_schedules_owner_id_idx').on(t.ownerId),
    uniqueIndex('rollout_schedules_one_active_per_flag').on(t.flagId).where(sql`status = 'active'`),
  ],
);

/**
 * Stages run in `sequence` order; `scheduled_at` null means the stage waits for a manual advance. A stage with
 * `applied_at` set has changed the flag and is history: it is never edited again.
 */
export const rolloutStages = pgTable(
  'rollout_stages',
  {
    id: uuid().primaryKey(),
    scheduleId: uuid().notNull().references(() => rolloutSchedules.id, { onDelete: 'cascade' }),
    sequence: integer().notNull(),
    percentage: integer().notNull(),
    scheduledAt: timestamp({ withTimezone: true }),
    appliedAt: timestamp({ withTimezone: true }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('rollout_stages_schedule_sequence_key').on(t.scheduleId, t.sequence)],
);

/**
 * Each guardrail decision of a guarded schedule: an advance (no guardrail degraded, the next stage applied) or a
 * rollback (a guardrail degraded). `stageId` is the stage whose exposure was tested; `metrics` holds the test of
 * every guardrail as shown on the wire.
 */
export const rolloutGuardrailDecisions = pgTable(
  'rollout_guardrail_decisions',
  {
    id: uuid().primaryKey(),
    scheduleId: uuid().notNull().references(() => rolloutSchedules.id, { onDelete: 'cascade' }),
    decision: text().$type<'advance' | 'rollback'>().notNull(),
    stageId: uuid().references(() => rolloutStages.id, { onDelete: 'set null' }),
    nextStageId: uuid().references(() => rolloutStages.id, { onDelete: 'set null' }),
    automatic: boolean().notNull(),
    confidence: doublePrecision().notNull(),
    rolloutPercentage: integer().notNull(),
    exposedFrom: timestamp({ withTimezone: true }).notNull(),
    exposedTo: timestamp({ withTimezone: true }).notNull(),
    baselineFrom: timestamp({ withTimezone: true }).notNull(),
    baselineTo: timestamp({ withTimezone: true }).notNull(),
    metrics: jsonb().$type<Array<Record<string, unknown>>>().notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [index('rollout_guardrail_decisions_schedule_idx').on(t.scheduleId, t.createdAt)],
);

export type RolloutScheduleRow = typeof rolloutSchedules.$inferSelect;
export type RolloutStageRow = typeof rolloutStages.$inferSelect;
export type RolloutGuardrailDecisionRow = typeof rolloutGuardrailDecisions.$inferSelect;
