/**
 * The results rollup: adds everything older than the lag that is not rolled up yet to the experiment's rollup tables
 * (see docs/statistics.md, "Rollups and caching"). Used by the results-rollup job and by background builds.
 */
import type { Db, Executor } from '../../db/client.js';
import { committedThrough } from '../../db/write-marks.js';
import type { Clock } from '../../platform/clock.js';
import type { AnalysedExperiment } from './experiment.js';
import { metricKind } from '../../analysis/compare.js';
import { armStats, type UserTotals, type WindowUserTotal } from '../tracking/read-model.js';
import * as store from './store.js';

/**
 * The conservative lag, used only when the bound of the data in flight cannot be read (committedThrough: a role that
 * cannot see the other sessions): everything older than this is taken as final.
 */
export const ROLLUP_LAG_MS = 60_000;

/** The distinct event names of an experiment's metrics (one rollup stream each). */
export const eventNamesOf = (e: { metrics: Array<{ event_name: string }> }): string[] => [...new Set(e.metrics.map((m) => m.event_name))];

/** Metrics grouped by the window they need, so that metrics with the same watermark are read or rolled up at once. */
export function familiesOf<W>(names: string[], windowOf: (name: string) => W | undefined): Array<{ names: string[]; window: W }> {
  const families = new Map<string, { names: string[]; window: W }>();
  for (const name of names) {
    const window = windowOf(name);
    if (window === undefined) continue;
    const key = JSON.stringify(window);
    const family = families.get(key);
    if (family) family.names.push(name);
    else families.set(key, { names: [name], window });
  }
  return [...families.values()];
}

/**
 * Runs tasks with at most `width` at a time (width 1: one after the other). A first computation is cut into more
 * tasks than that (each metric into `width` ranges, plus the assignments' tasks), so that the last ones are short.
 */
export async function atMost(width: number, tasks: Array<() => Promise<void>>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, tasks.length)) }, worker));
}

/**
 * Whether some metric of the experiment on this event reads the value columns (revenue, duration and the like): a
 * first computation for conversion and count metrics only leaves them out.
 */
export const needsValues = (e: Pick<AnalysedExperiment, 'metrics'>, eventName: string): boolean =>
  e.metrics.some((m) => m.event_name === eventName && metricKind(m.metric_type) === 'value');

/** Each metric's plan for its passes from the start up to `upTo`: one probe per metric, whatever its ranges. */
export async function passPlans(db: Executor, e: Pick<AnalysedExperiment, 'metrics'>, names: string[], upTo: Date | null): Promise<Map<string, store.PassPlan>> {
  const plans = new Map<string, store.PassPlan>();
  for (const name of names) plans.set(name, { values: needsValues(e, name), untagged: await armStats.untaggedBefore(db, [name], upTo) });
  return plans;
}

/**
 * Ranges of users each metric's ordered pass is cut into when `width` statements may run at once: several per
 * statement, because the split points divide the users, not the events (a metric's events may gather in some
 * ranges), and short tasks let every connection stay busy to the end.
 */
export const rangesFor = (width: number) => 4 * width;

/**
 * `parallel`: how many statements a first computation may run at once (RESULTS_PARALLEL_QUERIES on PostgreSQL; 1
 * under embedded PGlite, which has one connection).
 */
export function createRollup({ db, clock, parallel }: { db: Db; clock: Clock; parallel: number }) {
  /**
   * Rolls up everything older than the lag that is not rolled up yet. The assignments with their contexts and the
   * exposures are each rolled up in their own transaction that holds the stream's watermark row. The metrics' deltas
   * are computed over ranges of users with no lock or connection held (from the start for a metric never rolled up,
   * otherwise the window after the watermark of each family of metrics whose watermarks agree), and added under the
   * watermarks' locks unless another process moved them meanwhile. So refreshes of one experiment from any process
   * take turns per stream and each window is added exactly once; all of it runs `parallel` statements at a time.
   */
  async function refresh(e: AnalysedExperiment, { unlessWithinMs }: { unlessWithinMs?: number } = {}): Promise<void> {
    // Only a started experiment can have assignments.
    if (e.status === 'draft') return;
    // Everything up to here is committed or will be stamped later (docs/adr/0007-rollup-follows-commits.md).
    const upTo = await committedThrough(db, clock, ROLLUP_LAG_MS);
    /** One transaction over a stream: locks its watermark, then rolls up what is due. */
    const stream = (name: string, rollUp: (tx: Executor, w: store.CreatedWindow) => Promise<void>) =>
      () => db.transaction(async (tx) => {
        await store.tuneForResults(tx);
        const after = store.rolledUpTo(await store.lockWatermarks(tx, e.id, [name]), name);
        if (after !== null && after >= upTo) return;
        await rollUp(tx, { after, upTo });
        await store.setWatermarks(tx, e.id, [name], upTo);
      });
    const names = eventNamesOf(e);
    const marks = await store.readWatermarks(db, e.id);
    const markOf = (name: string) => store.metricWatermark(marks, name, needsValues(e, name));
    // A rollup driven by commits: skipped when every stream is already this close to the bound (another process, or
    // the one before, just rolled it up).
    if (unlessWithinMs !== undefined) {
      const near = (at: Date | null) => at !== null && at.getTime() >= upTo.getTime() - unlessWithinMs;
      const streams = [store.ASSIGNMENTS_STREAM, store.EXPOSURES_STREAM].map((s) => store.rolledUpTo(marks, s));
      if ([...streams, ...names.map(markOf)].every(near)) return;
    }
    // Metrics never rolled up (or rolled up without the values a metric now needs): one ordered pass each, over
    // 4 ranges of users per statement at a time. The others: one statement per family of metrics whose watermarks
    // agree (all of them, unless a metric was added later), over one range of users per statement at a time.
    const windows = familiesOf(names, markOf).flatMap((f) => (f.window !== null && f.window < upTo ? [{ names: f.names, after: f.window }] : []));
    const fromStart = names.filter((name) => markOf(name) === null);
    const rangesOf = async (parts: number, wanted: boolean) => (!wanted ? [] : parallel > 1 ? armStats.userRanges(await armStats.userSplits(db, parts)) : [{}]);
    const passRanges = await rangesOf(rangesFor(parallel), fromStart.length > 0);
    const windowRanges = await rangesOf(parallel, windows.length > 0);
    const plans = await passPlans(db, e, fromStart, upTo);
    const computed = new Map<string, store.MetricDay[][]>(names.map((name) => [name, []]));
    // A first computation's per-user totals, from its passes: the kept totals the windows after it start from.
    const userTotals = new Map<string, UserTotals[]>(fromStart.map((name) => [name, []]));
    const computing = (run: (t: Executor) => Promise<void>) => () => db.transaction(async (t) => {
      await store.tuneForResults(t);
      await run(t);
    });
    // A window reads its own events and its users' kept totals as of its start: its cost follows the window. The same
    // read gives what it adds to those totals.
    const windowUsers = windows.map(() => [] as WindowUserTotal[]);
    // Whether untagged flag events of the family exist at all (most metrics have none): then only the tagged are read.
    const windowUntagged = await Promise.all(windows.map((w) => store.untaggedBefore(db, w.names, upTo)));
    const windowTasks = windows.map((w, i) => windowRanges.map((range) => computing(async (t) => {
      const { days, users } = await store.metricWindowDeltas(t, e.id, w.names, { after: w.after, upTo }, { range, untagged: windowUntagged[i] });
      for (const [name, list] of days) computed.get(name)!.push(list);
      windowUsers[i].push(...users);
    })));
    // The longest tasks first: the windows of the metrics rolled up before, the assignments with their contexts and
    // the exposures, then the passes of metrics never rolled up.
    await atMost(parallel, [
      ...windowTasks.flat(),
      stream(store.ASSIGNMENTS_STREAM, async (tx, w) => {
        await store.rollUpAssignments(tx, e.id, e.variants.map((v) => v.id), w);
        await store.rollUpContexts(tx, e.id, e.variants.map((v) => v.id), w);
      }),
      stream(store.EXPOSURES_STREAM, (tx, w) => store.rollUpExposures(tx, e.id, e.variants.map((v) => v.id), w)),
      ...fromStart.flatMap((name) => passRanges.map((range) => computing(async (t) => {
        const plan = plans.get(name)!;
        const { days, users } = await store.metricDeltasWithUserTotals(t, e.id, name, upTo, { range, ...plan, userTotals: { sums: plan.values, ids: true, excluded: [] } });
        computed.get(name)!.push(days);
        userTotals.get(name)!.push(...users);
      }))),
    ]);
    const families: Array<{ names: string[]; from: Date | null; users?: WindowUserTotal[] }> = [
      ...windows.map((w, i) => ({ names: w.names, from: w.after, users: windowUsers[i] })), ...fromStart.map((name) => ({ names: [name], from: null })),
    ];
    for (const family of families) {
      await db.transaction(async (tx) => {
        const held = await store.lockWatermarks(tx, e.id, family.names.map(store.metricStream));
        // Another process moved a watermark meanwhile and added its own window: the next refresh adds what is left.
        if (family.names.some((name) => store.metricWatermark(held, name, needsValues(e, name))?.getTime() !== family.from?.getTime())) return;
        for (const name of family.names) {
          // A rollup without the values a metric now needs is replaced.
          if (family.from === null && store.rolledUpTo(held, store.metricStream(name)) !== null) await store.clearMetricDays(tx, e.id, name);
          await store.addMetricDays(tx, e.id, name, store.sumMetricDays(computed.get(name)!));
          if (family.from === null) await store.replaceUserTotals(tx, e.id, name, userTotals.get(name)!);
        }
        // The window's users' kept totals move with the watermark.
        if (family.users) await store.addWindowUserTotals(tx, e.id, family.users);
        await store.setWatermarks(tx, e.id, family.names.map(store.metricStream), upTo, family.from === null ? needsValues(e, family.names[0]) : undefined);
      });
    }
  }

  return { refresh };
}
