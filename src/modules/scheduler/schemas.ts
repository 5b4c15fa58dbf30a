import { Type, type Static } from 'typebox';
import { SCHEDULER_OUTCOMES } from '../../db/schema/scheduler.js';
import { DateTime, Nullable, Pagination, StringEnum } from '../../platform/schemas.js';

export const JOB_STATUSES = ['ok', 'error', 'pending', 'stale'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const SchedulerRunView = Type.Object({
  job_name: Type.String(),
  started_at: DateTime(),
  finished_at: DateTime(),
  duration_ms: Type.Integer(),
  outcome: StringEnum(SCHEDULER_OUTCOMES),
  error: Nullable(Type.String()),
});
export type SchedulerRunView = Static<typeof SchedulerRunView>;

export const JobHealthView = Type.Object({
  name: Type.String(),
  interval_seconds: Type.Integer(),
  status: StringEnum(JOB_STATUSES, {
    description: 'pending: never ran; error: the last run failed; stale: no run for three intervals; ok otherwise',
  }),
  next_run_at: Nullable(DateTime()),
  last_run: Nullable(SchedulerRunView),
});
export type JobHealthView = Static<typeof JobHealthView>;

export const SchedulerHealthView = Type.Object({
  status: StringEnum(['ok', 'degraded']),
  loop_enabled: Type.Boolean({ description: 'Whether this API process runs the scheduler loop (SCHEDULER_ENABLED)' }),
  jobs: Type.Array(JobHealthView),
});

export const NotifyTestView = Type.Object({ status: StringEnum(['sent']), channel: Type.String() });

export const JobParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) });
export const HistoryQuery = Pagination({ limit: 50, max: 500 });
