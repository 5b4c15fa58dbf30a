import type { Db } from '../../db/client.js';
import type { SchedulerRunRow } from '../../db/schema/scheduler.js';
import type { Actor } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { NotFound } from '../../platform/errors.js';
import { SCHEDULER_ALERT_CHANNEL, TICK_SECONDS, type JobInfo, type Scheduler } from '../../platform/scheduler.js';
import type { JobHealthView, JobStatus, SchedulerRunView } from './schemas.js';
import * as store from './store.js';

export const JOB_NOT_FOUND = 'Scheduler job not found';
/** A job with no run for this many intervals is reported stale: the loop is off or failing everywhere. */
const STALE_AFTER_INTERVALS = 3;

function toRunView(row: SchedulerRunRow): SchedulerRunView {
  return {
    job_name: row.jobName,
    started_at: row.startedAt.toISOString(),
    finished_at: row.finishedAt.toISOString(),
    duration_ms: row.durationMs,
    outcome: row.outcome,
    error: row.error,
  };
}

export type SchedulerHealthService = ReturnType<typeof createSchedulerHealthService>;

/** Reports on the background jobs from the runs the scheduler records (GET /scheduler/...). */
export function createSchedulerHealthService(deps: { db: Db; clock: Clock; scheduler: Scheduler; loopEnabled: boolean }) {
  const { db, scheduler } = deps;

  function jobStatus(job: JobInfo, last: SchedulerRunRow | undefined): JobStatus {
    if (!last) return 'pending';
    if (last.outcome === 'error') return 'error';
    const staleMs = (STALE_AFTER_INTERVALS * job.intervalSeconds + TICK_SECONDS) * 1000;
    return deps.clock.now().getTime() - last.startedAt.getTime() > staleMs ? 'stale' : 'ok';
  }

  async function report(jobs: JobInfo[]): Promise<JobHealthView[]> {
    const names = jobs.map((j) => j.name);
    const [runs, next] = await Promise.all([store.lastRuns(db, names), store.nextRuns(db, names)]);
    return jobs.map((job) => {
      const last = runs.find((r) => r.jobName === job.name);
      return {
        name: job.name,
        interval_seconds: job.intervalSeconds,
        status: jobStatus(job, last),
        next_run_at: next.find((n) => n.name === job.name)?.nextRunAt.toISOString() ?? null,
        last_run: last ? toRunView(last) : null,
      };
    });
  }

  function mustFind(name: string): JobInfo {
    const job = scheduler.jobs().find((j) => j.name === name);
    if (!job) throw new NotFound(JOB_NOT_FOUND);
    return job;
  }

  return {
    async health() {
      const jobs = await report(scheduler.jobs());
      const healthy = jobs.every((j) => j.status === 'ok' || j.status === 'pending');
      return { status: healthy ? ('ok' as const) : ('degraded' as const), loop_enabled: deps.loopEnabled, jobs };
    },

    async jobHealth(name: string): Promise<JobHealthView> {
      return (await report([mustFind(name)]))[0];
    },

    async history(name: string, skip: number, limit: number): Promise<SchedulerRunView[]> {
      mustFind(name);
      return (await store.runHistory(db, name, skip, limit)).map(toRunView);
    },

    /** Sends a test alert down the channel failed runs use, so operators can check the delivery end to end. */
    async notifyTest(actor: Actor) {
      await scheduler.alert({ job: 'notify-test', message: `Test alert requested by ${actor.username}`, test: true });
      return { status: 'sent' as const, channel: SCHEDULER_ALERT_CHANNEL };
    },
  };
}
