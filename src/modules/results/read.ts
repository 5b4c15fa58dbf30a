/**
 * Results reads: one repeatable-read snapshot over the rollups plus the tail not rolled up yet, bounded by
 * RESULTS_READ_TIMEOUT_MS (202 past it), with a first computation's independent reads run at once on PostgreSQL.
 */
import type { Db, Executor } from '../../db/client.js';
import { sqlState } from '../../db/errors.js';
import type { Bus } from '../../platform/bus.js';
import { DomainError } from '../../platform/errors.js';
import type { AnalysedExperiment } from './experiment.js';
import type { Snapshot } from '../../analysis/types.js';
import { atMost, eventNamesOf, familiesOf, needsValues, passPlans, rangesFor } from './rollup.js';
import { armStats, type UserRange, type UserTotals } from '../tracking/read-model.js';
import * as store from './store.js';

/** Bus channel: a results read ran out of time; any process builds the experiment's rollups in the background. */
export const RESULTS_ROLLUP_REQUESTED = 'results.rollup-requested';
/** PostgreSQL's SQLSTATE for a statement cancelled by statement_timeout. */
const QUERY_CANCELED = '57014';
export const RESULTS_COMPUTING_RETRY_SECONDS = 5;
export const RESULTS_COMPUTING =
  'Results for this experiment are being computed for the first time; retry in a few seconds (see Retry-After).';

/** 202 Accepted: the first computation of a large experiment runs in the background (docs/api-notes.md). */
export class ResultsComputing extends DomainError {
  constructor() {
    super(202, RESULTS_COMPUTING, { 'Retry-After': String(RESULTS_COMPUTING_RETRY_SECONDS) });
  }
}

/**
 * What a first computation's passes from the start gather besides the day deltas, for the metric library's
 * definitions: per wanted event name (with value sums or counts only), every user's totals from the metric's own
 * pass, and the users left out, all of one snapshot. Filled only when every wanted name is read from the start.
 */
export interface UserTotalsSink {
  wanted: Map<string, { sums: boolean; ids: boolean }>;
  totals?: Map<string, RangeTotals[]>;
  excluded?: string[];
}

/** User totals of one pass, with the index of its range of users (a ratio's two passes pair their users per range). */
export type RangeTotals = UserTotals & { range: number };

export function createReader({ db, bus, readTimeoutMs, parallel }: { db: Db; bus: Bus; readTimeoutMs: number; parallel: number }) {
  /**
   * Reads in one repeatable-read snapshot, so the rollup and its watermarks agree even while another process
   * refreshes. A read writes nothing: what the rollups do not hold yet is computed from the events directly, each
   * statement bounded by RESULTS_READ_TIMEOUT_MS; past it the rollups are built in the background and the caller gets
   * 202 (ResultsComputing). `fork` runs independent reads of the same snapshot at once (PostgreSQL: each on its own
   * connection, importing the snapshot), for the first computation.
   */
  let forking = false;
  async function consistentRead<T>(
    e: { id: string; status: string; variants: ReadonlyArray<{ id: string }>; metrics?: Array<{ event_name: string }> },
    read: (
      tx: Executor, marks: store.Watermarks, excluded: string[], fork: (reads: Array<(tx: Executor) => Promise<void>>) => Promise<void>,
      rollup: store.StoredRollup,
    ) => Promise<T>,
  ): Promise<T> {
    const options = { isolationLevel: 'repeatable read', accessMode: 'read only' } as const;
    try {
      return await db.transaction(async (tx) => {
        await store.tuneForResults(tx, readTimeoutMs);
        // The rollup's part of every stream in one statement; what tracking counts since each watermark is added to it.
        const rollup = await store.readRollup(tx, e.id, e.metrics ? eventNamesOf({ metrics: e.metrics }) : []);
        const marks = rollup.marks;
        const excluded = e.status === 'draft' ? [] : await store.excludedUsers(tx, e.id, e.variants.map((v) => v.id), store.rolledUpTo(marks, store.EXPOSURES_STREAM), rollup.excluded);
        // One forked read at a time per process: a read holds its own connection while its forks wait for theirs.
        const fork = async (reads: Array<(tx: Executor) => Promise<void>>) => {
          if (parallel < 2 || forking || reads.length < 2) {
            for (const one of reads) await one(tx);
            return;
          }
          forking = true;
          try {
            const snapshot = await store.exportSnapshot(tx);
            await atMost(parallel, reads.map((one) => () => db.transaction(async (child) => {
              await store.importSnapshot(child, snapshot);
              await store.tuneForResults(child, readTimeoutMs);
              await one(child);
            }, options)));
          } finally {
            forking = false;
          }
        };
        return read(tx, marks, excluded.map((x) => x.userId), fork, rollup);
      }, options);
    } catch (error) {
      if (sqlState(error) !== QUERY_CANCELED) throw error;
      await bus.publish(RESULTS_ROLLUP_REQUESTED, e.id);
      throw new ResultsComputing();
    }
  }

  /**
   * A draft has no assignment (only an active experiment assigns): its snapshot is empty, without a read. With no
   * rollup yet (a first computation), the assignments and each metric are read at once.
   */
  const loadSnapshot = async (e: AnalysedExperiment, sink?: UserTotalsSink): Promise<Snapshot> => e.status === 'draft' ? { assignments: [], metrics: {} } :
    consistentRead(e, async (tx, marks, excluded, fork, rollup) => {
      const assigned = store.rolledUpTo(marks, store.ASSIGNMENTS_STREAM);
      const metrics: Snapshot['metrics'] = {};
      let days: Awaited<ReturnType<typeof store.assignmentDays>> = { analysed: [], excluded: [] };
      let contexts: Snapshot['contexts'];
      const families = familiesOf(eventNamesOf(e), (name) => store.metricWatermark(marks, name, needsValues(e, name)));
      const readMetrics = (names: string[], window: Date) => async (t: Executor) => {
        for (const [name, rows] of await store.metricDays(t, e.id, names, window, excluded, rollup.metrics)) metrics[name] = rows;
      };
      // A metric never rolled up: its ordered pass (over ranges of users when statements run at once) and the
      // excluded users' history apart; their deltas add up.
      const fromStartNames = families.filter((f) => f.window === null).flatMap((f) => f.names);
      const ranges = fromStartNames.length === 0 ? [] : parallel > 1 ? armStats.userRanges(await armStats.userSplits(tx, rangesFor(parallel))) : [{}];
      const parts = new Map<string, { plus: store.MetricDay[][]; minus: store.MetricDay[][] }>();
      const plans = await passPlans(tx, e, fromStartNames, null);
      // The definitions' per-user totals come from these passes when all their events are read from the start.
      const totals = sink && [...sink.wanted.keys()].every((name) => fromStartNames.includes(name)) ? new Map<string, RangeTotals[]>() : undefined;
      const plusPass = (name: string, range: UserRange, index: number, plan: store.PassPlan) => async (t: Executor) => {
        const wanted = totals && sink!.wanted.get(name);
        if (!wanted) return armStats.metricDeltasFromStart(t, e.id, name, null, { range, ...plan });
        const { days, users } = await armStats.metricDeltasWithUserTotals(t, e.id, name, null, { range, ...plan, userTotals: { ...wanted, excluded } });
        totals!.set(name, [...(totals!.get(name) ?? []), ...users.map((u) => ({ ...u, range: index }))]);
        return days;
      };
      const passes = (name: string) => {
        const into = { plus: [] as store.MetricDay[][], minus: [] as store.MetricDay[][] };
        const plan = plans.get(name)!;
        parts.set(name, into);
        return [
          ...ranges.map((range, index) => async (t: Executor) => void into.plus.push(await plusPass(name, range, index, plan)(t))),
          ...(excluded.length === 0 ? [] : [async (t: Executor) => void into.minus.push(await armStats.metricDeltasFromStart(t, e.id, name, null, { users: excluded, ...plan }))]),
        ];
      };
      // The longest single reads first (the assignments and their contexts, each one statement), then the metrics:
      // their passes are cut into ranges short enough to keep every connection busy to the end.
      const reads = [
        async (t: Executor) => {
          days = await store.assignmentDays(t, e.id, e.variants.map((v) => v.id), assigned, excluded, rollup.assignments);
        },
        async (t: Executor) => {
          contexts = await store.contextCounts(t, e.id, e.variants.map((v) => v.id), assigned, rollup.contexts);
        },
        ...families.flatMap((f) => (f.window === null ? [] : [readMetrics(f.names, f.window)])),
        ...fromStartNames.flatMap(passes),
      ];
      // Forked only when something is read from the start: a read over the rollups is a few small statements.
      const fromStart = assigned === null || fromStartNames.length > 0;
      if (fromStart) await fork(reads);
      else for (const one of reads) await one(tx);
      for (const [name, { plus, minus }] of parts) metrics[name] = store.sumMetricDays(plus, minus);
      if (sink && totals) Object.assign(sink, { totals, excluded });
      return { assignments: days.analysed, excludedAssignments: days.excluded, metrics, contexts };
    });

  return { consistentRead, loadSnapshot };
}
