import { bigserial, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** When each background job is next due; claimed with one conditional UPDATE so a tick runs a job once. */
export const schedulerJobs = pgTable('scheduler_jobs', {
  name: text().primaryKey(),
  nextRunAt: timestamp({ withTimezone: true }).notNull(),
});

export const SCHEDULER_OUTCOMES = ['ok', 'error'] as const;
export type SchedulerOutcome = (typeof SCHEDULER_OUTCOMES)[number];

export const schedulerRuns = pgTable(
  'scheduler_runs',
  {
    id: bigserial({ mode: 'number' }).primaryKey(),
    jobName: text().notNull(),
    startedAt: timestamp({ withTimezone: true }).notNull(),
    finishedAt: timestamp({ withTimezone: true }).notNull(),
    durationMs: integer().notNull(),
    outcome: text().$type<SchedulerOutcome>().notNull(),
    error: text(),
  },
  (t) => [index('scheduler_runs_job_idx').on(t.jobName, t.startedAt)],
);

export type SchedulerRunRow = typeof schedulerRuns.$inferSelect;
