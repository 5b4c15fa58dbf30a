import { sql, type SQL } from 'drizzle-orm';
import { queryRows, type Executor } from '../../db/client.js';
import {
  assignmentSegmentsSql,
  assignmentsPerVariantDaySql,
  experimentAssignmentsSql,
  metricEventsPerUserDaySql,
  preExposureTotalsSql,
  sharedAssignmentsSql,
  type CreatedWindow,
} from '../tracking/store.js';

export const ASSIGNMENTS_STREAM = 'assignments';
export const metricStream = (eventName: string) => `metric:${eventName}`;

/** Assigned users of a variant on one UTC day (YYYY-MM-DD). */
export interface AssignmentDay {
  variantId: string;
  day: string;
  users: number;
}

/** What one UTC day added to a variant's sufficient statistics for one metric (see result_variant_days). */
export interface MetricDay {
  variantId: string;
  day: string;
  converters: number;
  eventCount: number;
  countSquares: number;
  valueSum: number;
  valueSquares: number;
}

/**
 * Locks the watermark rows of the given streams (creating missing ones), so that concurrent refreshes of one
 * experiment, from any process, take turns and never roll a window up twice. Rows are taken in stream order, so two
 * refreshes cannot deadlock.
 */
/**
 * Session settings for the results statements: their plans look expensive on paper (BRIN estimates are coarse), which
 * would make Postgres JIT-compile them for far longer than they run; a refresh that catches up on many events sorts
 * and hashes in memory rather than on disk.
 */
export async function tuneForResults(tx: Executor): Promise<void> {
  await tx.execute(sql`SELECT set_config('jit', 'off', true), set_config('work_mem', '64MB', true)`);
}

export async function lockWatermarks(tx: Executor, experimentId: string, streams: string[]): Promise<Map<string, Date | null>> {
  await tx.execute(sql`
    INSERT INTO result_watermarks (experiment_id, stream)
    SELECT ${experimentId}, s FROM unnest(${sql.param(streams)}::text[]) AS s ORDER BY s
    ON CONFLICT DO NOTHING`);
  const rows = await queryRows<{ stream: string; rolled_up_to: string | Date | null }>(tx, sql`
    SELECT stream, rolled_up_to FROM result_watermarks
    WHERE experiment_id = ${experimentId} AND stream = ANY(${sql.param(streams)}::text[])
    ORDER BY stream FOR UPDATE`);
  return new Map(rows.map((r) => [r.stream, r.rolled_up_to === null ? null : new Date(r.rolled_up_to)]));
}

export async function readWatermarks(db: Executor, experimentId: string): Promise<Map<string, Date | null>> {
  const rows = await queryRows<{ stream: string; rolled_up_to: string | Date | null }>(db, sql`
    SELECT stream, rolled_up_to FROM result_watermarks WHERE experiment_id = ${experimentId}`);
  return new Map(rows.map((r) => [r.stream, r.rolled_up_to === null ? null : new Date(r.rolled_up_to)]));
}

export async function setWatermark(tx: Executor, experimentId: string, stream: string, upTo: Date): Promise<void> {
  await tx.execute(sql`
    UPDATE result_watermarks SET rolled_up_to = ${upTo.toISOString()}::timestamptz
    WHERE experiment_id = ${experimentId} AND stream = ${stream}`);
}

export async function rollUpAssignments(tx: Executor, experimentId: string, variantIds: string[], w: CreatedWindow): Promise<void> {
  await tx.execute(sql`
    INSERT INTO result_assignment_days (experiment_id, variant_id, day, users)
    SELECT ${experimentId}, variant_id, day, users FROM (${assignmentsPerVariantDaySql(experimentId, variantIds, w)}) s
    ON CONFLICT (experiment_id, variant_id, day) DO UPDATE SET users = result_assignment_days.users + excluded.users`);
}

/**
 * The day deltas of one metric's events in a window, relative to the per-user totals already rolled up: for each
 * user and day in order, the totals before that day's events decide whether the user converts for the first time and
 * how much the squares of the user's totals grow ((s + v)^2 - s^2 = v (2s + v), exact for counts).
 */
function deltaCtes(experimentId: string, eventName: string, w: CreatedWindow): SQL {
  return sql`
    new_events AS (${metricEventsPerUserDaySql(experimentId, eventName, w)}),
    prior AS (
      SELECT n.user_id, coalesce(t.event_count, 0) AS prior_count, coalesce(t.value_sum, 0) AS prior_sum
      FROM (SELECT DISTINCT user_id FROM new_events) n
      LEFT JOIN result_user_totals t ON t.experiment_id = ${experimentId} AND t.event_name = ${eventName} AND t.user_id = n.user_id
    ),
    steps AS (
      SELECT ne.variant_id, ne.day, ne.event_count, ne.value_sum,
             p.prior_count + sum(ne.event_count) OVER w - ne.event_count AS count_before,
             p.prior_sum + sum(ne.value_sum) OVER w - ne.value_sum AS sum_before
      FROM new_events ne JOIN prior p USING (user_id)
      WINDOW w AS (PARTITION BY ne.user_id ORDER BY ne.day)
    ),
    deltas AS (
      SELECT variant_id, day,
             count(*) FILTER (WHERE count_before = 0)::bigint AS converters,
             sum(event_count)::bigint AS event_count,
             sum(event_count * (2 * count_before + event_count))::float8 AS count_square_delta,
             sum(value_sum)::float8 AS value_sum,
             sum(value_sum * (2 * sum_before + value_sum))::float8 AS value_square_delta
      FROM steps GROUP BY variant_id, day
    )`;
}

/** Adds one metric's events of a window to the per-user totals and the day deltas, in one statement. */
export async function rollUpMetric(tx: Executor, experimentId: string, eventName: string, w: CreatedWindow): Promise<void> {
  await tx.execute(sql`
    WITH ${deltaCtes(experimentId, eventName, w)},
    users_added AS (
      INSERT INTO result_user_totals (experiment_id, event_name, user_id, variant_id, event_count, value_sum)
      SELECT ${experimentId}, ${eventName}, user_id, variant_id, sum(event_count), sum(value_sum)
      FROM new_events GROUP BY user_id, variant_id
      ON CONFLICT (experiment_id, event_name, user_id) DO UPDATE SET
        event_count = result_user_totals.event_count + excluded.event_count,
        value_sum = result_user_totals.value_sum + excluded.value_sum
    )
    INSERT INTO result_variant_days (experiment_id, event_name, variant_id, day, converters, event_count, count_square_delta, value_sum, value_square_delta)
    SELECT ${experimentId}, ${eventName}, variant_id, day, converters, event_count, count_square_delta, value_sum, value_square_delta FROM deltas
    ON CONFLICT (experiment_id, event_name, variant_id, day) DO UPDATE SET
      converters = result_variant_days.converters + excluded.converters,
      event_count = result_variant_days.event_count + excluded.event_count,
      count_square_delta = result_variant_days.count_square_delta + excluded.count_square_delta,
      value_sum = result_variant_days.value_sum + excluded.value_sum,
      value_square_delta = result_variant_days.value_square_delta + excluded.value_square_delta`);
}

/** Assignment days: the rollup up to the watermark plus the assignments made since, read directly. */
export async function assignmentDays(db: Executor, experimentId: string, variantIds: string[], watermark: Date | null): Promise<AssignmentDay[]> {
  const rows = await queryRows<{ variant_id: string; day: string; users: number }>(db, sql`
    SELECT variant_id, day::text AS day, sum(users)::bigint AS users FROM (
      SELECT variant_id, day, users FROM result_assignment_days WHERE experiment_id = ${experimentId}
      UNION ALL
      SELECT variant_id, day, users FROM (${assignmentsPerVariantDaySql(experimentId, variantIds, { after: watermark, upTo: null })}) tail
    ) d GROUP BY variant_id, day ORDER BY day`);
  return rows.map((r) => ({ variantId: r.variant_id, day: r.day, users: Number(r.users) }));
}

/** Metric days: the rollup up to the watermark plus the deltas of the events since, computed directly. */
export async function metricDays(db: Executor, experimentId: string, eventName: string, watermark: Date | null): Promise<MetricDay[]> {
  const rows = await queryRows<{
    variant_id: string; day: string; converters: number; event_count: number; count_square_delta: number; value_sum: number; value_square_delta: number;
  }>(db, sql`
    WITH ${deltaCtes(experimentId, eventName, { after: watermark, upTo: null })}
    SELECT variant_id, day::text AS day, sum(converters)::bigint AS converters, sum(event_count)::bigint AS event_count,
           sum(count_square_delta)::float8 AS count_square_delta, sum(value_sum)::float8 AS value_sum,
           sum(value_square_delta)::float8 AS value_square_delta
    FROM (
      SELECT variant_id, day, converters, event_count, count_square_delta, value_sum, value_square_delta
      FROM result_variant_days WHERE experiment_id = ${experimentId} AND event_name = ${eventName}
      UNION ALL
      SELECT variant_id, day, converters, event_count, count_square_delta, value_sum, value_square_delta FROM deltas
    ) d GROUP BY variant_id, day ORDER BY day`);
  return rows.map((r) => ({
    variantId: r.variant_id,
    day: r.day,
    converters: Number(r.converters),
    eventCount: Number(r.event_count),
    countSquares: Number(r.count_square_delta),
    valueSum: Number(r.value_sum),
    valueSquares: Number(r.value_square_delta),
  }));
}

/** Current per-user totals of a metric: rolled up plus the events since the watermark. */
function userTotalsSql(experimentId: string, eventName: string, watermark: Date | null): SQL {
  return sql`
    SELECT user_id, sum(event_count)::bigint AS event_count, sum(value_sum)::float8 AS value_sum FROM (
      SELECT user_id, event_count, value_sum FROM result_user_totals WHERE experiment_id = ${experimentId} AND event_name = ${eventName}
      UNION ALL
      SELECT user_id, event_count, value_sum FROM (${metricEventsPerUserDaySql(experimentId, eventName, { after: watermark, upTo: null })}) tail
    ) u GROUP BY user_id`;
}

/** Per-variant sufficient statistics of one group of users (a segment value, or an interaction cell). */
export interface GroupStats {
  users: number;
  converters: number;
  eventCount: number;
  countSquares: number;
  valueSum: number;
  valueSquares: number;
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

export interface SegmentStats extends GroupStats {
  segment: string | null;
  variantId: string;
}

/** A metric's statistics per value of an assignment-context attribute and variant. */
export async function segmentStats(
  db: Executor, experimentId: string, attribute: string, eventName: string, watermark: Date | null,
): Promise<SegmentStats[]> {
  const rows = await queryRows<GroupRow & { segment: string | null; variant_id: string }>(db, sql`
    SELECT s.segment, s.variant_id, ${groupColumns}
    FROM (${assignmentSegmentsSql(experimentId, attribute)}) s
    LEFT JOIN (${userTotalsSql(experimentId, eventName, watermark)}) u USING (user_id)
    GROUP BY s.segment, s.variant_id`);
  return rows.map((r) => ({ segment: r.segment, variantId: r.variant_id, ...toGroupStats(r) }));
}

export interface CellStats extends GroupStats {
  variantA: string;
  variantB: string;
}

/** Experiment A's metric among users assigned to both experiments, per (variant of A, variant of B). */
export async function interactionCells(
  db: Executor, experimentA: string, experimentB: string, eventName: string, watermark: Date | null,
): Promise<CellStats[]> {
  const rows = await queryRows<GroupRow & { variant_a: string; variant_b: string }>(db, sql`
    SELECT s.variant_a, s.variant_b, ${groupColumns}
    FROM (${sharedAssignmentsSql(experimentA, experimentB)}) s
    LEFT JOIN (${userTotalsSql(experimentA, eventName, watermark)}) u USING (user_id)
    GROUP BY s.variant_a, s.variant_b`);
  return rows.map((r) => ({ variantA: r.variant_a, variantB: r.variant_b, ...toGroupStats(r) }));
}

/** Per-variant sums for CUPED on a conversion metric: y = converted (0/1), x = the pre-exposure covariate. */
export interface CupedSums {
  variantId: string;
  users: number;
  withHistory: number;
  converters: number;
  sumX: number;
  sumX2: number;
  sumXY: number;
}

export type CovariateKind = 'indicator' | 'count' | 'value';

const COVARIATE: Record<CovariateKind, SQL> = {
  indicator: sql`1.0`,
  count: sql`event_count::float8`,
  value: sql`value_sum`,
};

export async function cupedSums(
  db: Executor, experimentId: string, eventName: string, watermark: Date | null, covariateEvent: string, covariate: CovariateKind,
): Promise<CupedSums[]> {
  const rows = await queryRows<{
    variant_id: string; users: number; with_history: number; converters: number; sum_x: number; sum_x2: number; sum_xy: number;
  }>(db, sql`
    SELECT a.variant_id, count(*)::bigint AS users, count(x.user_id)::bigint AS with_history, count(y.user_id)::bigint AS converters,
           coalesce(sum(x.cov), 0)::float8 AS sum_x, coalesce(sum(x.cov * x.cov), 0)::float8 AS sum_x2,
           coalesce(sum(x.cov) FILTER (WHERE y.user_id IS NOT NULL), 0)::float8 AS sum_xy
    FROM (${experimentAssignmentsSql(experimentId)}) a
    LEFT JOIN (SELECT user_id, ${COVARIATE[covariate]} AS cov FROM (${preExposureTotalsSql(experimentId, covariateEvent)}) p) x USING (user_id)
    LEFT JOIN (${userTotalsSql(experimentId, eventName, watermark)}) y USING (user_id)
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
