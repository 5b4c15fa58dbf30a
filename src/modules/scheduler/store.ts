import { desc, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { schedulerJobs, schedulerRuns, type SchedulerRunRow } from '../../db/schema/scheduler.js';

/** The newest run of each named job. */
export function lastRuns(db: Executor, names: string[]): Promise<SchedulerRunRow[]> {
  if (names.length === 0) return Promise.resolve([]);
  return db
    .selectDistinctOn([schedulerRuns.jobName])
    .from(schedulerRuns)
    .where(inArray(schedulerRuns.jobName, names))
    .orderBy(schedulerRuns.jobName, desc(schedulerRuns.startedAt), desc(schedulerRuns.id));
}

export function nextRuns(db: Executor, names: string[]): Promise<Array<{ name: string; nextRunAt: Date }>> {
  if (names.length === 0) return Promise.resolve([]);
  return db.select().from(schedulerJobs).where(inArray(schedulerJobs.name, names));
}

export function runHistory(db: Executor, name: string, skip: number, limit: number): Promise<SchedulerRunRow[]> {
  return db
    .select()
    .from(schedulerRuns)
    .where(eq(schedulerRuns.jobName, name))
    .orderBy(desc(schedulerRuns.startedAt), desc(schedulerRuns.id))
    .offset(skip)
    .limit(limit);
}
