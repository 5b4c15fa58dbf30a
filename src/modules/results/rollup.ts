/**
 * The results rollup: adds everything older than the lag that is not rolled up yet to the experiment's rollup tables
 * (see docs/statistics.md, "Rollups and caching"). Used by the results-rollup job and by background builds.
 */
import type { Db, Executor } from '../../db/client.js';
import type { Clock } from '../../platform/clock.js';
import type { AnalysedExperiment } from './experiment.js';
import { eventNamesOf, familiesOf } from './snapshot.js';
import * as store from './store.js';

/**
 * Events are stored within milliseconds of their created_at (the tracking writer acknowledges after commit), so
 * everything older than this lag is final and can be rolled up; newer events are read directly on each computation.
 */
export const ROLLUP_LAG_MS = 60_000;
/** Ranges of users a first computation's ordered pass of one metric is cut into, to run at once (PostgreSQL). */
export const USER_RANGES = 2;

export function createRollup({ db, clock, parallel }: { db: Db; clock: Clock; parallel: boolean }) {
  /** Runs independent pieces of work at once when the database has connections to spare, else one after the other. */
  async function inTurn(pieces: Array<() => Promise<void>>): Promise<void> {
    if (parallel) {
      await Promise.all(pieces.map((piece) => piece()));
      return;
    }
    for (const piece of pieces) await piece();
  }

  /**
   * Rolls up everything older than the lag that is not rolled up yet. Each stream (assignments with their contexts,
   * exposures, each family of metrics) is rolled up in its own transaction that holds the stream's watermark row, so
   * refreshes of one experiment from any process take turns per stream, each window is added exactly once, and the
   * streams of a first build run at once.
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
          const after = marks.get(streamOf(item)) ?? null;
          return after === null || after < upTo ? after : undefined;
        };
        for (const family of familiesOf(items, due)) {
          await rollUp(tx, family.names, { after: family.window, upTo });
          for (const item of family.names) await store.setWatermark(tx, e.id, streamOf(item), upTo);
        }
      });
    const same = (name: string) => name;
    /**
     * A metric never rolled up, with connections to spare: its ordered pass runs over ranges of users at once, with no
     * lock or connection held, and the sum is added under the stream's lock unless another process did it meanwhile.
     */
    const fromStart = (name: string) => async () => {
      const parts = await Promise.all(store.userRanges(await store.userSplits(db, USER_RANGES)).map((range) => db.transaction(async (t) => {
        await store.tuneForResults(t);
        return store.metricDeltasFromStart(t, e.id, name, upTo, { range });
      })));
      await db.transaction(async (tx) => {
        const marks = await store.lockWatermarks(tx, e.id, [store.metricStream(name)]);
        if ((marks.get(store.metricStream(name)) ?? null) !== null) return;
        await store.addMetricDays(tx, e.id, name, store.sumMetricDays(parts));
        await store.setWatermark(tx, e.id, store.metricStream(name), upTo);
      });
    };
    const names = eventNamesOf(e);
    const marks = await store.readWatermarks(db, e.id);
    // One statement per family of metrics whose watermarks agree (all of them, unless a metric was added later).
    const families = familiesOf(names, (name) => marks.get(store.metricStream(name)) ?? null);
    await inTurn([
      stream([store.ASSIGNMENTS_STREAM], same, async (tx, _items, w) => {
        await store.rollUpAssignments(tx, e.id, e.variants.map((v) => v.id), w);
        await store.rollUpContexts(tx, e.id, e.variants.map((v) => v.id), w);
      }),
      stream([store.EXPOSURES_STREAM], same, (tx, _items, w) => store.rollUpExposures(tx, e.id, w)),
      ...families.flatMap((family) => family.window === null && parallel
        ? family.names.map(fromStart)
        : [stream(family.names, store.metricStream, (tx, items, w) => store.rollUpMetrics(tx, e.id, items, w))]),
    ]);
  }

  return { refresh };
}
