/**
 * The one owner of events -> per-arm sufficient statistics: every statement that turns assignments and events into
 * per-variant numbers (assigned users per day, context counts, the users left out, metric day deltas, per-user
 * totals grouped by segment, by cell of two experiments or with a covariate, the bandit's arms, guardrail counts)
 * runs here, over the relations of `counting.ts` (the counting rule, docs/adr/0004-analysis-core.md), and returns
 * the analysis package's types (`src/analysis/types.ts`). Other modules call it through tracking's read model
 * (`armStats` in read-model.ts). One call shape: `(db, experimentId, what, window or users)`, `db` being the caller's
 * executor, so that the results read all of it in one repeatable-read snapshot and the rollup in its own transactions.
 */
import { sql, type SQL } from 'drizzle-orm';
import type {
  AssignmentDay, ContextCount, CupedSums, GroupStats, MetricDay, SegmentStats,
} from '../../analysis/types.js';
import { queryRows, type Executor } from '../../db/client.js';
import {
  ALL_TIME,
  armMetricStats,
  assignmentContextValues,
  assignmentDaysOfUsers as assignmentDaysOfUsersSql,
  assignmentSegments,
  assignmentsPerVariantDay,
  conflictingExposures as conflictingExposuresSql,
  countedEventsInUserOrder,
  countedEventsPerUserDay,
  countedTotalsOfUser,
  experimentAssignments,
  preExposureTotals,
  sharedAssignments,
  type CreatedWindow,
  type UserRange,
  type VariantMetricStats,
} from './counting.js';
import { mergeOrdered, notExcluded } from './ordered.js';

export { ALL_TIME, type CreatedWindow, type UserRange, type VariantMetricStats };
export {
  guardrailCounts, guardrailUserValues, type EventCountStats, type GroupUserValues, type GuardrailCounts, type GuardrailValueWindows, type GuardrailWindows,
} from './guardrail-counts.js';
export { untaggedBefore } from './ordered.js';
export { analysedUsers, userValues } from './user-values.js';

// ---- Assignments: users per variant and day, context values, users with a conflicting exposure ----

type AssignmentDayRow = { variant_id: string; day: string; users: number };
const toAssignmentDay = (r: AssignmentDayRow): AssignmentDay => ({ variantId: r.variant_id, day: r.day, users: Number(r.users) });

/** Assignments made in a window, per variant and UTC day. */
export async function assignmentDays(db: Executor, experimentId: string, variantIds: string[], w: CreatedWindow): Promise<AssignmentDay[]> {
  const rows = await queryRows<AssignmentDayRow>(db, sql`
    SELECT variant_id, day::text AS day, users FROM (${assignmentsPerVariantDay(experimentId, variantIds, w)}) s`);
  return rows.map(toAssignmentDay);
}

/** The given users' assignments, per variant and UTC day of assignment, ordered by day. */
export async function assignmentDaysOfUsers(db: Executor, experimentId: string, users: string[]): Promise<AssignmentDay[]> {
  const rows = await queryRows<AssignmentDayRow>(db, sql`
    SELECT variant_id, day::text AS day, users FROM (${assignmentDaysOfUsersSql(experimentId, users)}) x ORDER BY day`);
  return rows.map(toAssignmentDay);
}

/**
 * Users per scalar value of each top-level attribute of the contexts of assignments made in a window, per variant.
 * With `limit`, an attribute with more distinct values than that in the window is named in `overLimit` and its
 * values are not returned (an id or an email says nothing about a dimension of traffic, and would be many rows).
 */
export async function contextCounts(
  db: Executor, experimentId: string, variantIds: string[], w: CreatedWindow, { limit }: { limit?: number } = {},
): Promise<{ counts: ContextCount[]; overLimit: string[] }> {
  type Row = { attribute: string; value: string | null; variant_id: string | null; users: number | null; over: boolean };
  const rows = await queryRows<Row>(db, limit === undefined ? sql`
    SELECT attribute, value, variant_id, users, false AS over FROM (${assignmentContextValues(experimentId, variantIds, w)}) c` : sql`
    WITH fresh AS MATERIALIZED (${assignmentContextValues(experimentId, variantIds, w)}),
    over AS (SELECT attribute FROM fresh GROUP BY attribute HAVING count(DISTINCT value) > ${limit})
    SELECT attribute, value, variant_id, users, false AS over FROM fresh WHERE attribute NOT IN (SELECT attribute FROM over)
    UNION ALL
    SELECT attribute, NULL, NULL, NULL, true FROM over`);
  return {
    counts: rows.filter((r) => !r.over).map((r) => ({ attribute: r.attribute, value: r.value!, variantId: r.variant_id!, users: Number(r.users) })),
    overLimit: rows.filter((r) => r.over).map((r) => r.attribute),
  };
}

/** A user exposed to another variant than the assigned one (`variantId`), first seen then (timestamptz text). */
export interface ConflictingExposure {
  userId: string;
  variantId: string;
  firstSeen: string;
}

/** Users whose conflicting exposure (counting.ts `conflictingExposures`) belongs to a window. */
export async function conflictingExposures(db: Executor, experimentId: string, variantIds: string[], w: CreatedWindow): Promise<ConflictingExposure[]> {
  const rows = await queryRows<{ user_id: string; variant_id: string; first_seen: string }>(db, sql`
    SELECT user_id, variant_id, first_seen::text AS first_seen FROM (${conflictingExposuresSql(experimentId, variantIds, w)}) c`);
  return rows.map((r) => ({ userId: r.user_id, variantId: r.variant_id, firstSeen: r.first_seen }));
}

// ---- Metric day deltas ----

/**
 * The day deltas' columns, from per-event rows with the user's running totals up to and with the event (n, the
 * event's rank; s, the value so far) and its value v: a user converts at rank 1; the square of the user's count grows
 * by 2n - 1, and that of the value by v (2s - v) ((s - v + v)^2 - (s - v)^2), exact for counts. Without `values`
 * the value columns are 0 and the running value is not computed (a large part of the pass's work).
 */
const deltaColumns = (values: boolean) => sql`
  count(*) FILTER (WHERE n = 1)::bigint AS converters,
  count(*)::bigint AS event_count,
  (2 * sum(n) - count(*))::float8 AS count_square_delta,
  ${values ? sql`sum(v)::float8 AS value_sum, sum(v * (2 * s - v))::float8 AS value_square_delta` : sql`0::float8 AS value_sum, 0::float8 AS value_square_delta`}`;

/** Which events and users a metric read covers, and how (see `metricDeltas`). */
export interface DeltaScope {
  /** Only these users. */
  users?: string[];
  /** Only user ids in this range (passes over disjoint ranges can run at once; their deltas add up). */
  range?: UserRange;
  /** false: no untagged counted event exists before the window's end (`untaggedBefore`): one stream is read. */
  untagged?: boolean;
  /** false: the value columns stay 0 (only conversion and count metrics read the event). */
  values?: boolean;
  /**
   * From the start only: also each user's event count and (with `sums`) value sum, from the same pass (`UserTotals`),
   * the `excluded` users left out; with `ids`, the users' ids.
   */
  userTotals?: { sums: boolean; ids: boolean; excluded: string[] };
  /**
   * A later window only: the users' counted totals as of the window's start, kept by the caller, as a relation
   * (user_id, event_name, event_count, value_sum) with no row for a user without events. The window then reads its
   * own events and one row per user from it, instead of counting each user's earlier events (its cost followed the
   * users' history).
   */
  prior?: SQL;
}

/**
 * The day deltas of a family of metrics' events in a window, as (event_name, variant_id, day, converters, event_count,
 * count_square_delta, value_sum, value_square_delta). Each event adds to its user's totals, so with the totals before
 * it (count_before, sum_before) it decides whether the user converts for the first time and how much the squares of
 * the user's totals grow ((s + v)^2 - s^2 = v (2s + v), exact for counts); a day's delta is the sum over its events.
 * Nothing is kept per user.
 *
 * A window from the start (the first computation, and the excluded users' history) is one ordered pass per metric:
 * the events come in user order from the index, so the running totals are a window over each user's events with
 * no sort (run it through `mergeOrdered`). A later window reads only its own events (by time) and, by user index,
 * the totals its users had before it.
 */
function deltas(experimentId: string, eventNames: string[], w: CreatedWindow, { users, range, untagged, values = true, userTotals, prior }: DeltaScope = {}): SQL {
  if (w.after === null) {
    // A user's totals are those of their last event (no next row in the window): gathered per group, one entry per user.
    const sums = values || userTotals?.sums === true;
    const kept = userTotals === undefined ? sql`` : sql`last AND ${notExcluded(sql`user_id`, userTotals.excluded)}`;
    const totals = userTotals === undefined ? sql`` : sql`,
      ${userTotals.ids ? sql`json_agg(user_id) FILTER (WHERE ${kept})` : sql`NULL::json`} AS user_ids, json_agg(n) FILTER (WHERE ${kept}) AS user_counts,
      ${userTotals.sums ? sql`json_agg(s::float8) FILTER (WHERE ${kept})` : sql`NULL::json`} AS user_sums`;
    // The event name is a constant of each pass: kept out of the window and the grouping, which run per event.
    return sql.join(eventNames.map((name) => sql`
      SELECT ${name}::text AS event_name, variant_id, day, ${deltaColumns(values)}${totals} FROM (
        SELECT variant_id, (created_at AT TIME ZONE 'UTC')::date AS day, row_number() OVER u AS n
               ${sums ? sql`, coalesce(value, 0) AS v, coalesce(sum(value) OVER u, 0) AS s` : sql``}
               ${userTotals === undefined ? sql`` : sql`, user_id, lead(1) OVER u IS NULL AS last`}
        FROM (${countedEventsInUserOrder(experimentId, name, w.upTo, { users, range, untagged })}) c
        WINDOW u AS (PARTITION BY user_id ORDER BY created_at ROWS UNBOUNDED PRECEDING)
      ) s GROUP BY variant_id, day`), sql` UNION ALL `);
  }
  return sql`${windowSteps(experimentId, eventNames, { after: w.after, upTo: w.upTo }, { users, range, untagged, prior })}
    SELECT ${dayDeltaColumns} FROM steps GROUP BY event_name, variant_id, day`;
}

/** The day deltas' columns from `steps` (windowSteps). */
const dayDeltaColumns = sql`
  event_name, variant_id, day::text AS day,
  count(*) FILTER (WHERE count_before = 0)::bigint AS converters,
  sum(event_count)::bigint AS event_count,
  sum(event_count * (2 * count_before + event_count))::float8 AS count_square_delta,
  sum(value_sum)::float8 AS value_sum,
  sum(value_sum * (2 * sum_before + value_sum))::float8 AS value_square_delta`;

/**
 * A later window's relations: `new_events` (the window's counted events per user, event name and day) and `steps`
 * (each of them with the user's totals before it), for a statement that follows with its SELECT.
 */
function windowSteps(
  experimentId: string, eventNames: string[], w: { after: Date; upTo: Date | null }, { users, range, untagged, prior }: Pick<DeltaScope, 'users' | 'range' | 'untagged' | 'prior'>,
): SQL {
  // The users' totals before the window: kept by the caller (one row per user), or counted from their earlier events.
  // Either way one probe per row of the window: a LATERAL that cannot be pulled up (OFFSET 0; a simple one becomes a
  // join the planner plans on its estimates) is a nested loop by construction (a join planned on a young table's
  // statistics scanned every kept row once per row of the window).
  const before = prior !== undefined ? sql`
        SELECT ne.user_id, ne.event_name, ne.variant_id, ne.day, ne.event_count, ne.value_sum,
               coalesce(p.event_count, 0) AS prior_count, coalesce(p.value_sum, 0)::float8 AS prior_sum
        FROM new_events ne
        LEFT JOIN LATERAL (SELECT k.event_count, k.value_sum FROM (${prior}) k WHERE k.user_id = ne.user_id AND k.event_name = ne.event_name OFFSET 0) p ON TRUE` : sql`
        SELECT ne.user_id, ne.event_name, ne.variant_id, ne.day, ne.event_count, ne.value_sum,
               b.event_count AS prior_count, b.value_sum AS prior_sum
        FROM new_events ne
        CROSS JOIN LATERAL (${countedTotalsOfUser(experimentId, { userId: sql`ne.user_id`, eventName: sql`ne.event_name`, assignedAt: sql`ne.assigned_at` }, w.after, untagged)}) b`;
  return sql`
    WITH new_events AS MATERIALIZED (${countedEventsPerUserDay(experimentId, eventNames, w, { users, range, untagged: untagged !== false })}),
    steps AS (
      SELECT event_name, variant_id, day, event_count, value_sum,
             prior_count + sum(event_count) OVER u - event_count AS count_before,
             prior_sum + sum(value_sum) OVER u - value_sum AS sum_before
      FROM (${before}) s
      WINDOW u AS (PARTITION BY user_id, event_name ORDER BY day)
    )`;
}


type MetricDayRow = {
  event_name: string; variant_id: string; day: string; converters: number; event_count: number; count_square_delta: number; value_sum: number; value_square_delta: number;
};
const toMetricDay = (r: MetricDayRow): MetricDay => ({
  variantId: r.variant_id,
  day: r.day,
  converters: Number(r.converters),
  eventCount: Number(r.event_count),
  countSquares: Number(r.count_square_delta),
  valueSum: Number(r.value_sum),
  valueSquares: Number(r.value_square_delta),
});

/** Day delta rows of several metrics, per event name (every name present, with no rows when it has none). */
function byEventName(eventNames: string[], rows: MetricDayRow[]): Map<string, MetricDay[]> {
  const out = new Map<string, MetricDay[]>(eventNames.map((n) => [n, []]));
  for (const r of rows) out.get(r.event_name)?.push(toMetricDay(r));
  return out;
}

/**
 * A family of metrics' day deltas in a window, per event name, in one statement: from the start one ordered pass
 * per metric, run with the ordered plan unless `ordered` says otherwise (a small list of users reads as well
 * without it); a later window by time. The deltas of disjoint windows, ranges or users add up.
 */
export async function metricDeltas(
  db: Executor, experimentId: string, eventNames: string[], w: CreatedWindow, scope: DeltaScope & { ordered?: boolean } = {},
): Promise<Map<string, MetricDay[]>> {
  const rows = await mergeOrdered(db, scope.ordered ?? w.after === null, () => queryRows<MetricDayRow>(db, sql`
    SELECT event_name, variant_id, day::text AS day, converters, event_count, count_square_delta, value_sum, value_square_delta
    FROM (${deltas(experimentId, eventNames, w, scope)}) d`));
  return byEventName(eventNames, rows);
}

/**
 * One metric's day deltas from the start up to `upTo` (null: everything), for one range of users or for the given
 * users only: one ordered pass (several over disjoint ranges can run at once, and their deltas add up).
 */
export async function metricDeltasFromStart(
  db: Executor, experimentId: string, eventName: string, upTo: Date | null, scope: DeltaScope,
): Promise<MetricDay[]> {
  return (await metricDeltas(db, experimentId, [eventName], { after: null, upTo }, scope)).get(eventName)!;
}

/** Each user's totals of one metric event, from a pass from the start, for one group of a variant's users. */
export interface UserTotals {
  variantId: string;
  /** the users, in the order of the totals (null when the pass was not asked for ids) */
  userIds: string[] | null;
  /** the user's counted events */
  counts: number[];
  /** the sum of their values (null when the pass was not asked for sums) */
  sums: number[] | null;
}

/**
 * As metricDeltasFromStart, with every user's totals of the event from the same pass (each user with a counted event
 * in the scope but the excluded, whose events the day deltas still count): the per-user values of the metric
 * library's definitions, in the same snapshot and with no pass of their own.
 */
export async function metricDeltasWithUserTotals(
  db: Executor, experimentId: string, eventName: string, upTo: Date | null, scope: DeltaScope & Required<Pick<DeltaScope, 'userTotals'>>,
): Promise<{ days: MetricDay[]; users: UserTotals[] }> {
  type Row = MetricDayRow & { user_ids: string[] | null; user_counts: number[] | null; user_sums: number[] | null };
  const rows = await mergeOrdered(db, true, () => queryRows<Row>(db, sql`
    SELECT event_name, variant_id, day::text AS day, converters, event_count, count_square_delta, value_sum, value_square_delta,
           user_ids, user_counts, user_sums
    FROM (${deltas(experimentId, [eventName], { after: null, upTo }, scope)}) d`));
  return {
    days: rows.map(toMetricDay),
    users: rows.flatMap((r) => r.user_counts === null ? [] : [{
      // JSON numbers already (counts are bigints, sums float8): no copy.
      variantId: r.variant_id, userIds: r.user_ids, counts: r.user_counts!, sums: r.user_sums,
    }]),
  };
}

/** One user's counted events of one metric event in a window, and their value sum (users without any have none). */
export interface WindowUserTotal {
  eventName: string;
  userId: string;
  eventCount: number;
  valueSum: number;
}

/**
 * A family of metrics' day deltas (metrics whose watermarks agree) in a window after their watermark, per event name,
 * for one range of users, with what the window adds to each of its users' totals: one statement, one read of the
 * window's events, whatever the number of metrics or days. `prior` as in DeltaScope.
 */
export async function metricWindowDeltas(
  db: Executor, experimentId: string, eventNames: string[], w: { after: Date; upTo: Date }, scope: { range?: UserRange; untagged?: boolean; prior: SQL },
): Promise<{ days: Map<string, MetricDay[]>; users: WindowUserTotal[] }> {
  // Both parts in one result: the day rows carry no user, the users' rows no variant.
  type Row = MetricDayRow & { user_id: string | null };
  const rows = await queryRows<Row>(db, sql`${windowSteps(experimentId, eventNames, w, scope)}
    SELECT ${dayDeltaColumns}, NULL::text AS user_id FROM steps GROUP BY event_name, variant_id, day
    UNION ALL
    SELECT event_name, NULL, NULL, NULL, sum(event_count)::bigint, NULL, sum(value_sum)::float8, NULL, user_id
    FROM new_events GROUP BY user_id, event_name`);
  const users: WindowUserTotal[] = [];
  const dayRows: MetricDayRow[] = [];
  for (const r of rows) {
    if (r.user_id === null) dayRows.push(r);
    else users.push({ eventName: r.event_name, userId: r.user_id, eventCount: Number(r.event_count), valueSum: Number(r.value_sum) });
  }
  return { days: byEventName(eventNames, dayRows), users };
}

/**
 * Split points of user ids in the column's order, from PostgreSQL's statistics of assignments.user_id: `parts - 1`
 * ids that cut the users into about equal ranges, for ordered passes that run at once (empty without statistics).
 */
export async function userSplits(db: Executor, parts: number): Promise<string[]> {
  const [row] = await queryRows<{ bounds: string[] | null }>(db, sql`
    SELECT histogram_bounds::text::text[] AS bounds FROM pg_stats
    WHERE schemaname = current_schema() AND tablename = 'assignments' AND attname = 'user_id'`);
  const bounds = row?.bounds ?? [];
  if (bounds.length < parts) return [];
  return Array.from({ length: parts - 1 }, (_, i) => bounds[Math.round(((i + 1) * (bounds.length - 1)) / parts)]);
}

/** Consecutive ranges of user ids cut at the split points, covering every id. */
export function userRanges(splits: string[]): UserRange[] {
  return [...splits, undefined].map((to, i) => ({ from: i === 0 ? undefined : splits[i - 1], to }));
}

// ---- Per-user totals grouped: by segment, by cell of two experiments, with a covariate; the bandit's arms ----

/** Current per-user totals of a metric, from the events (the analyses by user are cached). */
function userTotals(experimentId: string, eventName: string): SQL {
  return sql`
    SELECT user_id, sum(event_count)::bigint AS event_count, sum(value_sum)::float8 AS value_sum
    FROM (${countedEventsPerUserDay(experimentId, [eventName], ALL_TIME)}) e GROUP BY user_id`;
}


const groupColumns = sql`
  count(*)::bigint AS users, count(u.user_id)::bigint AS converters,
  coalesce(sum(u.event_count), 0)::bigint AS event_count, coalesce(sum(u.event_count * u.event_count), 0)::float8 AS count_squares,
  coalesce(sum(u.value_sum), 0)::float8 AS value_sum, coalesce(sum(u.value_sum * u.value_sum), 0)::float8 AS value_squares`;

interface GroupRow {
  users: number; converters: number; event_count: number; count_squares: number; value_sum: number; value_squares: number;
}
const toGroupStats = (r: GroupRow): GroupStats => ({
  users: Number(r.users),
  converters: Number(r.converters),
  eventCount: Number(r.event_count),
  countSquares: Number(r.count_squares),
  valueSum: Number(r.value_sum),
  valueSquares: Number(r.value_squares),
});

/** A metric's statistics per value of an assignment-context attribute and variant, the `excluded` users left out. */
export async function segmentStats(
  db: Executor, experimentId: string, attribute: string, eventName: string, excluded: string[],
): Promise<SegmentStats[]> {
  const rows = await queryRows<GroupRow & { segment: string | null; variant_id: string }>(db, sql`
    SELECT s.segment, s.variant_id, ${groupColumns}
    FROM (${assignmentSegments(experimentId, attribute)}) s
    LEFT JOIN (${userTotals(experimentId, eventName)}) u USING (user_id)
    WHERE ${notExcluded(sql`s.user_id`, excluded)}
    GROUP BY s.segment, s.variant_id`);
  return rows.map((r) => ({ segment: r.segment, variantId: r.variant_id, ...toGroupStats(r) }));
}

/** A metric's statistics among users assigned to two experiments, per (variant of A, variant of B). */
export interface CellStats extends GroupStats {
  variantA: string;
  variantB: string;
}

/** Experiment A's metric among users assigned to both experiments, per (variant of A, variant of B). */
export async function interactionCells(
  db: Executor, experimentA: string, experimentB: string, eventName: string, excluded: string[],
): Promise<CellStats[]> {
  const rows = await queryRows<GroupRow & { variant_a: string; variant_b: string }>(db, sql`
    SELECT s.variant_a, s.variant_b, ${groupColumns}
    FROM (${sharedAssignments(experimentA, experimentB)}) s
    LEFT JOIN (${userTotals(experimentA, eventName)}) u USING (user_id)
    WHERE ${notExcluded(sql`s.user_id`, excluded)}
    GROUP BY s.variant_a, s.variant_b`);
  return rows.map((r) => ({ variantA: r.variant_a, variantB: r.variant_b, ...toGroupStats(r) }));
}

/** How a CUPED covariate counts a user's pre-exposure events: 1 when any, their count, or their value sum. */
export type CovariateKind = 'indicator' | 'count' | 'value';

const COVARIATE: Record<CovariateKind, SQL> = {
  indicator: sql`1.0`,
  count: sql`event_count::float8`,
  value: sql`value_sum`,
};

/** Per variant, the CUPED sums of a conversion metric with a covariate from the pre-exposure events. */
export async function cupedSums(
  db: Executor, experimentId: string, eventName: string, covariateEvent: string, covariate: CovariateKind,
  excluded: string[],
): Promise<CupedSums[]> {
  const rows = await queryRows<{
    variant_id: string; users: number; with_history: number; converters: number; sum_x: number; sum_x2: number; sum_xy: number;
  }>(db, sql`
    SELECT a.variant_id, count(*)::bigint AS users, count(x.user_id)::bigint AS with_history, count(y.user_id)::bigint AS converters,
           coalesce(sum(x.cov), 0)::float8 AS sum_x, coalesce(sum(x.cov * x.cov), 0)::float8 AS sum_x2,
           coalesce(sum(x.cov) FILTER (WHERE y.user_id IS NOT NULL), 0)::float8 AS sum_xy
    FROM (${experimentAssignments(experimentId)}) a
    LEFT JOIN (SELECT user_id, ${COVARIATE[covariate]} AS cov FROM (${preExposureTotals(experimentId, covariateEvent)}) p) x USING (user_id)
    LEFT JOIN (${userTotals(experimentId, eventName)}) y USING (user_id)
    WHERE ${notExcluded(sql`a.user_id`, excluded)}
    GROUP BY a.variant_id`);
  return rows.map((r) => ({
    variantId: r.variant_id,
    users: Number(r.users),
    withHistory: Number(r.with_history),
    converters: Number(r.converters),
    sumX: Number(r.sum_x),
    sumX2: Number(r.sum_x2),
    sumXY: Number(r.sum_xy),
  }));
}

/**
 * One metric's per-variant analysed users, converters and sums of per-user value totals over all time, in one
 * statement without the results rollup (the bandit's arms): the results' sample sizes and conversions of that metric.
 */
export async function variantMetricStats(db: Executor, experimentId: string, eventName: string): Promise<VariantMetricStats[]> {
  const rows = await queryRows<{ variant_id: string; users: number; converters: number; value_sum: number; value_sumsq: number }>(
    db, armMetricStats(experimentId, eventName));
  return rows.map((r) => ({
    variantId: r.variant_id,
    users: Number(r.users),
    converters: Number(r.converters),
    valueSum: Number(r.value_sum),
    valueSumSquares: Number(r.value_sumsq),
  }));
}
