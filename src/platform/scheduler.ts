import { performance } from 'node:perf_hooks';
import { and, eq, lte } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { schedulerJobs, schedulerRuns, type SchedulerOutcome } from '../db/schema/scheduler.js';
import type { Bus } from './bus.js';
import type { Clock } from './clock.js';
import { report, telemetry } from './telemetry.js';

/**
 * Session advisory lock held by the process running a tick: one leader at a time across API processes. Keyed by the
 * schema too (advisory locks are per database): deployments in two schemas of one database, or test files running at
 * once, each have their own leader instead of one finding the other's lock and running nothing.
 */
const LEADER_LOCK_ID = 7_301_002;
const LEADER_LOCK = `${LEADER_LOCK_ID}, hashtext(current_schema())`;
/** How often the loop looks for due jobs; each job runs at most once per its own interval. */
export const TICK_SECONDS = 10;
/** Longest error text kept per run: enough to diagnose, bounded in size. */
const ERROR_TEXT_LIMIT = 2_000;
/** Failed runs are announced here; the notification module forwards them to chat and email. */
export const SCHEDULER_ALERT_CHANNEL = 'scheduler.alert';

export type Job = (now: Date) => Promise<void>;

export interface JobInfo {
  name: string;
  intervalSeconds: number;
}

export interface SchedulerLog {
  error(details: Record<string, unknown>, message: string): void;
}

export interface Scheduler {
  /** Adds a job; modules call this while the services are composed. Names are unique. */
  register(name: string, intervalSeconds: number, job: Job): void;
  jobs(): JobInfo[];
  /**
   * One tick: when this process wins the leader lock, runs every job whose interval has passed, records each run,
   * and returns the names it ran (empty when another process holds the lock). Tests call it with their own `now`.
   */
  runDue(now?: Date): Promise<string[]>;
  /** Announces a scheduler alert (a failed run, or a test from POST /scheduler/notify/test). */
  alert(alert: { job: string; message: string; test?: boolean }): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

export function createScheduler(deps: {
  database: Database; clock: Clock; bus: Bus; log: SchedulerLog;
  /** SCHEDULER_TICK_SECONDS: how often the loop looks for due jobs (default TICK_SECONDS). */
  tickSeconds?: number;
}): Scheduler {
  const { database, clock } = deps;
  const db = database.db;
  const registered = new Map<string, { intervalSeconds: number; job: Job }>();
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<unknown> | undefined;

  /**
   * Claims the job for this interval with one conditional UPDATE: of several processes (or ticks) only one moves
   * next_run_at forward, so a job runs once per interval even when leaders change between ticks.
   */
  async function claim(name: string, intervalSeconds: number, now: Date): Promise<boolean> {
    await db.insert(schedulerJobs).values({ name, nextRunAt: now }).onConflictDoNothing();
    const claimed = await db
      .update(schedulerJobs)
      .set({ nextRunAt: new Date(now.getTime() + intervalSeconds * 1000) })
      .where(and(eq(schedulerJobs.name, name), lte(schedulerJobs.nextRunAt, now)))
      .returning({ name: schedulerJobs.name });
    return claimed.length > 0;
  }

  async function runOne(name: string, job: Job, now: Date): Promise<void> {
    const startedAt = clock.now();
    const t0 = performance.now();
    let outcome: SchedulerOutcome = 'ok';
    let error: string | null = null;
    try {
      await job(now);
    } catch (failure) {
      outcome = 'error';
      error = (failure instanceof Error ? failure.message : String(failure)).slice(0, ERROR_TEXT_LIMIT);
      deps.log.error({ job: name, err: failure }, 'scheduler job failed');
    }
    report(telemetry.jobRan, { job: name, ok: outcome === 'ok', seconds: (performance.now() - t0) / 1000 });
    await db.insert(schedulerRuns).values({
      jobName: name,
      startedAt,
      finishedAt: clock.now(),
      durationMs: Math.round(performance.now() - t0),
      outcome,
      error,
    });
    if (error !== null) await scheduler.alert({ job: name, message: error });
  }

  const scheduler: Scheduler = {
    register(name, intervalSeconds, job) {
      if (registered.has(name)) throw new Error(`Scheduler job ${name} is registered twice`);
      registered.set(name, { intervalSeconds, job });
    },

    jobs: () => [...registered].map(([name, { intervalSeconds }]) => ({ name, intervalSeconds })),

    runDue(now = clock.now()) {
      return database.session(async (exec) => {
        const [row] = await exec<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${LEADER_LOCK}) AS locked`);
        if (!row?.locked) return [];
        try {
          const ran: string[] = [];
          for (const [name, { intervalSeconds, job }] of registered) {
            if (!(await claim(name, intervalSeconds, now))) continue;
            ran.push(name);
            await runOne(name, job, now);
          }
          return ran;
        } finally {
          await exec(`SELECT pg_advisory_unlock(${LEADER_LOCK})`);
        }
      });
    },

    async alert(alert) {
      const message = JSON.stringify({ ...alert, test: alert.test ?? false, at: clock.now().toISOString() });
      await deps.bus.publish(SCHEDULER_ALERT_CHANNEL, message).catch(() => undefined);
    },

    start() {
      if (timer) return;
      timer = setInterval(() => {
        if (inFlight) return;
        inFlight = scheduler
          .runDue()
          .catch((failure: unknown) => deps.log.error({ err: failure }, 'scheduler tick failed'))
          .finally(() => {
            inFlight = undefined;
          });
      }, (deps.tickSeconds ?? TICK_SECONDS) * 1000);
      // The loop must not keep a process alive that is otherwise done (tests, CLI tools).
      timer.unref();
    },

    async stop() {
      clearInterval(timer);
      timer = undefined;
      await inFlight;
    },
  };
  return scheduler;
}
