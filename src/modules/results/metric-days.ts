/**
 * Metric day deltas: what each UTC day added to a variant's sufficient statistics of one metric, rolled up by the
 * results-rollup job and read from the events for what the rollup does not hold yet (docs/statistics.md, "Rollups
 * and caching"). Part of the results store.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { MetricDay } from '../../analysis/types.js';
import { queryRows, type Executor } from '../../db/client.js';
import { resultVariantDays } from '../../db/schema/results.js';
import {
  ALL_TIME,
  countedEventsInUserOrder,
  countedEventsPerUserDay,
  countedTotalsOfUser,
  type CreatedWindow,
  type UserRange,
  untaggedEventsExist,
} from '../tracking/counting.js';

export type { MetricDay };

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

/**
 * The day deltas of a family of metrics' events in a window, as (event_name, variant_id, day, converters, event_count,
 * count_square_delta, value_sum, value_square_delta). Each event adds to its user's totals, so with the totals before
 * it (count_before, sum_before) it decides whether the user converts for the first time and how much the squares of
 * the user's totals grow ((s + v)^2 - s^2 = v (2s + v), exact for counts); a day's delta is the sum over its events.
 * `users` restricts the deltas to those users. Nothing is kept per user.
 *
 * A window from the start (the first computation, and the excluded users' history) is one ordered pass per metric:
 * the events come in user order from the index, so the running totals are a window over each user's events with
 * no sort (run it through `mergeOrdered`). A later window reads only its own events (by time) and, by user index,
 * the totals its users had before it.
 */
function deltas(
  experimentId: string, eventNames: string[], w: CreatedWindow,
  { users, range, untagged, values = true }: { users?: string[]; range?: UserRange; untagged?: boolean; values?: boolean } = {},
): SQL {
  if (w.after === null) {
    // The event name is a constant of each pass: kept out of the window and the grouping, which run per event.
    return sql.join(eventNames.map((name) => sql`
      SELECT ${name}::text AS event_name, variant_id, day, ${deltaColumns(values)} FROM (
        SELECT variant_id, (created_at AT TIME ZONE 'UTC')::date AS day, row_number() OVER u AS n
               ${values ? sql`, coalesce(value, 0) AS v, coalesce(sum(value) OVER u, 0) AS s` : sql``}
        FROM (${countedEventsInUserOrder(experimentId, name, w.upTo, { users, range, untagged })}) c
        WINDOW u AS (PARTITION BY user_id ORDER BY created_at ROWS UNBOUNDED PRECEDING)
      ) s GROUP BY variant_id, day`), sql` UNION ALL `);
  }
  // Per row of the window, one probe by user: a LATERAL is a nested loop by construction, whatever the estimates.
  return sql`
    WITH new_events AS MATERIALIZED (${countedEventsPerUserDay(experimentId, eventNames, w, { users, range })}),
    steps AS (
      SELECT event_name, variant_id, day, event_count, value_sum,
             prior_count + sum(event_count) OVER u - event_count AS count_before,
             prior_sum + sum(value_sum) OVER u - value_sum AS sum_before
      FROM (
        SELECT ne.user_id, ne.event_name, ne.variant_id, ne.day, ne.event_count, ne.value_sum,
               b.event_count AS prior_count, b.value_sum AS prior_sum
        FROM new_events ne
        CROSS JOIN LATERAL (${countedTotalsOfUser(experimentId, { userId: sql`ne.user_id`, eventName: sql`ne.event_name`, assignedAt: sql`ne.assigned_at` }, w.after, untagged)}) b
      ) s
      WINDOW u AS (PARTITION BY user_id, event_name ORDER BY day)
    )
    SELECT event_name, variant_id, day,
           count(*) FILTER (WHERE count_before = 0)::bigint AS converters,
           sum(event_count)::bigint AS event_count,
           sum(event_count * (2 * count_before + event_count))::float8 AS count_square_delta,
           sum(value_sum)::float8 AS value_sum,
           sum(value_sum * (2 * sum_before + value_sum))::float8 AS value_square_delta
    FROM steps GROUP BY event_name, variant_id, day`;
}

/**
 * Planner settings for a statement over `deltas` from the start, for just that statement. The merge join of the
 * ordered streams is what makes it fast: costed on estimates, the planner prefers hashing a million text keys, or
 * probing the assignments once per event (hash joins and nested loops off). Parallel workers would each read the
 * whole ordered stream again beside their share of the assignments (none).
 */
const ORDERED_PLAN: Array<[string, string]> = [['enable_hashjoin', 'off'], ['enable_nestloop', 'off'], ['max_parallel_workers_per_gather', '0']];

async function mergeOrdered<T>(tx: Executor, fromStart: boolean, run: () => Promise<T>): Promise<T> {
  if (!fromStart) return run();
  const [{ before }] = await queryRows<{ before: string[] }>(tx, sql`
    SELECT array[${sql.join(ORDERED_PLAN.map(([name]) => sql`current_setting(${name})`), sql`, `)}] AS before,
           ${sql.join(ORDERED_PLAN.map(([name, value]) => sql`set_config(${name}, ${value}, true)`), sql`, `)}`);
  const out = await run();
  await tx.execute(sql`SELECT ${sql.join(ORDERED_PLAN.map(([name], i) => sql`set_config(${name}, ${before[i]}, true)`), sql`, `)}`);
  return out;
}

/** Whether untagged counted events of the metrics exist up to `upTo`: when none, reads of them take one stream. */
export async function untaggedBefore(db: Executor, eventNames: string[], upTo: Date | null): Promise<boolean> {
  const [{ found }] = await queryRows<{ found: boolean }>(db, untaggedEventsExist(eventNames, upTo));
  return found;
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

/** Rows of `deltas` as day deltas, read as they are. */
const readDeltas = (db: Executor, d: SQL): Promise<MetricDayRow[]> => queryRows<MetricDayRow>(db, sql`
  SELECT event_name, variant_id, day::text AS day, converters, event_count, count_square_delta, value_sum, value_square_delta
  FROM (${d}) d`);

/** Day delta rows of several metrics, per event name (every name present, with no rows when it has none). */
function byEventName(eventNames: string[], rows: MetricDayRow[]): Map<string, MetricDay[]> {
  const out = new Map<string, MetricDay[]>(eventNames.map((n) => [n, []]));
  for (const r of rows) out.get(r.event_name)?.push(toMetricDay(r));
  return out;
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

/** How a metric's passes from the start read it, decided once for all its ranges. */
export interface PassPlan {
  /** false: the value columns stay 0 (only conversion and count metrics read the event). */
  values: boolean;
  /** false: no untagged counted event exists up to the pass's end (untaggedBefore), and the pass reads one stream. */
  untagged: boolean;
}

/**
 * One metric's day deltas from the start up to `upTo` (null: everything), for one range of users or for the given
 * users only: one ordered pass (several over disjoint ranges can run at once, and their deltas add up).
 */
export async function metricDeltasFromStart(
  db: Executor, experimentId: string, eventName: string, upTo: Date | null, only: PassPlan & { range?: UserRange; users?: string[] },
): Promise<MetricDay[]> {
  const rows = await mergeOrdered(db, true, () => readDeltas(db, deltas(experimentId, [eventName], { after: null, upTo }, only)));
  return rows.map(toMetricDay);
}

/**
 * A family of metrics' day deltas (metrics whose watermarks agree) in a window after their watermark, per event name,
 * for one range of users (several over disjoint ranges can run at once, and their deltas add up): one statement
 * whatever the number of metrics or days.
 */
export async function metricWindowDeltas(
  db: Executor, experimentId: string, eventNames: string[], w: { after: Date; upTo: Date }, only: { range?: UserRange; untagged: boolean },
): Promise<Map<string, MetricDay[]>> {
  return byEventName(eventNames, await readDeltas(db, deltas(experimentId, eventNames, w, only)));
}

/** Adds day deltas computed apart (by metricDeltasFromStart or metricWindowDeltas) to one metric's rollup. */
export async function addMetricDays(tx: Executor, experimentId: string, eventName: string, days: MetricDay[]): Promise<void> {
  if (days.length === 0) return;
  const column = <K extends keyof MetricDay>(key: K) => sql.param(days.map((d) => d[key]));
  await tx.execute(sql`
    INSERT INTO ${resultVariantDays} (experiment_id, event_name, variant_id, day, converters, event_count, count_square_delta, value_sum, value_square_delta)
    SELECT ${experimentId}, ${eventName}, d.variant_id, d.day, d.converters, d.event_count, d.count_squares, d.value_sum, d.value_squares
    FROM unnest(${column('variantId')}::uuid[], ${column('day')}::date[], ${column('converters')}::bigint[], ${column('eventCount')}::bigint[],
                ${column('countSquares')}::float8[], ${column('valueSum')}::float8[], ${column('valueSquares')}::float8[])
      AS d(variant_id, day, converters, event_count, count_squares, value_sum, value_squares)
    ON CONFLICT (experiment_id, event_name, variant_id, day) DO UPDATE SET
      converters = ${resultVariantDays}.converters + excluded.converters,
      event_count = ${resultVariantDays}.event_count + excluded.event_count,
      count_square_delta = ${resultVariantDays}.count_square_delta + excluded.count_square_delta,
      value_sum = ${resultVariantDays}.value_sum + excluded.value_sum,
      value_square_delta = ${resultVariantDays}.value_square_delta + excluded.value_square_delta`);
}

/** Sums day deltas per (variant, day): `plus` lists added, `minus` lists subtracted; ordered by day. */
export function sumMetricDays(plus: MetricDay[][], minus: MetricDay[][] = []): MetricDay[] {
  const out = new Map<string, MetricDay>();
  const add = (d: MetricDay, sign: 1 | -1) => {
    const key = `${d.variantId}/${d.day}`;
    const into = out.get(key) ?? { variantId: d.variantId, day: d.day, converters: 0, eventCount: 0, countSquares: 0, valueSum: 0, valueSquares: 0 };
    into.converters += sign * d.converters;
    into.eventCount += sign * d.eventCount;
    into.countSquares += sign * d.countSquares;
    into.valueSum += sign * d.valueSum;
    into.valueSquares += sign * d.valueSquares;
    out.set(key, into);
  };
  for (const list of plus) for (const d of list) add(d, 1);
  for (const list of minus) for (const d of list) add(d, -1);
  return [...out.values()].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
}

/**
 * Metric days of a family of metrics whose watermarks agree: the rollup up to the watermark plus the deltas of the
 * events since, computed directly, minus the whole history of the excluded users (their deltas telescope: what
 * every window added for them equals their deltas computed at once).
 */
export async function metricDays(
  db: Executor, experimentId: string, eventNames: string[], watermark: Date | null, excluded: string[],
): Promise<Map<string, MetricDay[]>> {
  const minus = excluded.length === 0 ? sql`` : sql`
    UNION ALL
    SELECT event_name, variant_id, day, -converters, -event_count, -count_square_delta, -value_sum, -value_square_delta
    FROM (${deltas(experimentId, eventNames, ALL_TIME, { users: excluded })}) x`;
  const untagged = await untaggedBefore(db, eventNames, watermark);
  const rows = await mergeOrdered(db, watermark === null, () => queryRows<MetricDayRow>(db, sql`
    SELECT event_name, variant_id, day::text AS day, sum(converters)::bigint AS converters, sum(event_count)::bigint AS event_count,
           sum(count_square_delta)::float8 AS count_square_delta, sum(value_sum)::float8 AS value_sum,
           sum(value_square_delta)::float8 AS value_square_delta
    FROM (
      SELECT event_name, variant_id, day, converters, event_count, count_square_delta, value_sum, value_square_delta
      FROM ${resultVariantDays} WHERE experiment_id = ${experimentId} AND event_name = ANY(${sql.param(eventNames)}::text[])
      UNION ALL
      SELECT event_name, variant_id, day, converters, event_count, count_square_delta, value_sum, value_square_delta
      FROM (${deltas(experimentId, eventNames, { after: watermark, upTo: null }, { untagged })}) tail
      ${minus}
    ) d GROUP BY event_name, variant_id, day ORDER BY day`));
  return byEventName(eventNames, rows);
}

