/**
 * The results rollup: adds everything older than the lag that is not rolled up yet to the experiment's rollup tables
 * (see docs/statistics.md, "Rollups and caching"). Used by the results-rollup job and by background builds.
 */
import type { Db, Executor } from '../../db/client.js';
import type { Clock } from '../../platform/clock.js';
import type { AnalysedExperiment } from './experiment.js';
import { metricKind } from './compare.js';
import { eventNamesOf, familiesOf } from './snapshot.js';
import * as store from './store.js';

/**
 * Events are stored within milliseconds of their created_at (the tracking writer acknowledges after commit), so
 * everything older than this lag is final and can be rolled up; newer events are read directly on each computation.
 */
export const ROLLUP_LAG_MS = 60_000;
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
  for (const name of names) plans.set(name, { values: needsValues(e, name), untagged: await store.untaggedBefore(db, [name], upTo) });
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
   * Rolls up everything older than the lag that is not rolled up yet. Each stream (assignments with their contexts,
   * exposures, each family of metrics) is rolled up in its own transaction that holds the stream's watermark row, so
   * refreshes of one experiment from any process take turns per stream and each window is added exactly once. A
   * metric never rolled up is computed first, over ranges of users, with no lock or connection held, and added under
   * its lock unless another process did it meanwhile; all of it runs `parallel` statements at a time.
   */
  async function refresh(e: AnalysedExperiment): Promise<void> {
    // Only a started experiment can have assignments.
    if (e.status === 'draft') return;
    const upTo = new Date(clock.now().getTime() - ROLLUP_LAG_MS);
    /** One transaction over some streams: locks their watermarks, then rolls up each group whose watermarks agree. */
    const stream = (items: string[], streamOf: (item: string) => string, rollUp: (tx: Executor, items: string[], w: store.CreatedWindow) => Promise<void>) =>
      () => db.transaction(async (tx) => {
        await store.tuneForResults(tx);
        const marks = await store.lockWatermarks(tx, e.id, items.map(streamOf));
        const due = (item: string) => {
          const after = store.rolledUpTo(marks, streamOf(item));
          return after === null || after < upTo ? after : undefined;
        };
        for (const family of familiesOf(items, due)) {
          await rollUp(tx, family.names, { after: family.window, upTo });
          await store.setWatermarks(tx, e.id, family.names.map(streamOf), upTo);
        }
      });
    const same = (name: string) => name;
    const names = eventNamesOf(e);
    const marks = await store.readWatermarks(db, e.id);
    // One statement per family of metrics whose watermarks agree (all of them, unless a metric was added later).
    const families = familiesOf(names, (name) => store.metricWatermark(marks, name, needsValues(e, name)));
    // A metric never rolled up (or rolled up without the values a metric now needs): its ordered pass (over ranges of
    // users when statements run at once).
    const fromStartNames = families.filter((f) => f.window === null).flatMap((f) => f.names);
    const ranges = fromStartNames.length === 0 ? [] : parallel > 1 ? store.userRanges(await store.userSplits(db, rangesFor(parallel))) : [{}];
    const computed = new Map<string, store.MetricDay[][]>(fromStartNames.map((name) => [name, []]));
    const plans = await passPlans(db, e, fromStartNames, upTo);
    const pass = (name: string, range: store.UserRange) => async () => {
      const days = await db.transaction(async (t) => {
        await store.tuneForResults(t);
        return store.metricDeltasFromStart(t, e.id, name, upTo, { range, ...plans.get(name)! });
      });
      computed.get(name)?.push(days);
    };
    // The longest tasks first: the refreshes of metrics rolled up before (a window of their events each), the
    // assignments with their contexts and the exposures, then the passes of metrics never rolled up.
    await atMost(parallel, [
      ...families.flatMap((f) => (f.window === null ? []
        : [stream(f.names, store.metricStream, (tx, items, w) => store.rollUpMetrics(tx, e.id, items, w))])),
      stream([store.ASSIGNMENTS_STREAM], same, async (tx, _items, w) => {
        await store.rollUpAssignments(tx, e.id, e.variants.map((v) => v.id), w);
        await store.rollUpContexts(tx, e.id, e.variants.map((v) => v.id), w);
      }),
      stream([store.EXPOSURES_STREAM], same, (tx, _items, w) => store.rollUpExposures(tx, e.id, w)),
      ...fromStartNames.flatMap((name) => ranges.map((range) => pass(name, range))),
    ]);
    for (const [name, parts] of computed) {
      await db.transaction(async (tx) => {
        const values = needsValues(e, name);
        const held = await store.lockWatermarks(tx, e.id, [store.metricStream(name)]);
        // Another process did it meanwhile.
        if (store.metricWatermark(held, name, values) !== null) return;
        // A rollup without the values a metric now needs is replaced.
        if (store.rolledUpTo(held, store.metricStream(name)) !== null) await store.clearMetricDays(tx, e.id, name);
        await store.addMetricDays(tx, e.id, name, store.sumMetricDays(parts));
        await store.setWatermarks(tx, e.id, [store.metricStream(name)], upTo, values);
      });
    }
  }

  return { refresh };
}
