import { sql, type SQL } from 'drizzle-orm';
import { CONTEXT_VALUES_LIMIT } from '../../analysis/domain.js';
import { queryRows, type Executor } from '../../db/client.js';
import { resultAssignmentDays, resultContextOverLimit, resultContextValues, resultExcludedUsers, resultVariantDays, resultWatermarks } from '../../db/schema/results.js';
import {
  ALL_TIME,
  assignmentContextValues,
  assignmentDaysOfUsers,
  assignmentSegments,
  assignmentsPerVariantDay,
  conflictingExposures,
  countedEventsPerUserDay,
  experimentAssignments,
  preExposureTotals,
  sharedAssignments,
  type CreatedWindow,
  type UserRange,
} from '../tracking/counting.js';

import type { AssignmentDay, ContextCount, CupedSums, GroupStats, SegmentStats } from '../../analysis/types.js';

export type { CreatedWindow, UserRange };
export type { AssignmentDay, ContextCount, CupedSums, GroupStats, SegmentStats };
// The metric day deltas (rollup, reads from the start, ranges of users) live in metric-days.ts.
export * from './metric-days.js';
export const ASSIGNMENTS_STREAM = 'assignments';
/** Tracked events naming another variant than the user's assignment (result_excluded_users). */
export const EXPOSURES_STREAM = 'exposures';
export { CONTEXT_VALUES_LIMIT };
export const metricStream = (eventName: string) => `metric:${eventName}`;


/**
 * Session settings for the results statements: their plans look expensive on paper (BRIN estimates are coarse), which
 * would make Postgres JIT-compile them for far longer than they run; a refresh that catches up on many events sorts
 * and hashes in memory rather than on disk.
 */
export async function tuneForResults(tx: Executor, statementTimeoutMs?: number): Promise<void> {
  // A statement timeout bounds every statement of the transaction (PostgreSQL cancels one that runs longer; embedded
  // PGlite has no timer and ignores it).
  const timeout = statementTimeoutMs === undefined ? sql`` : sql`, set_config('statement_timeout', ${String(Math.max(1, Math.round(statementTimeoutMs)))}, true)`;
  await tx.execute(sql`SELECT set_config('jit', 'off', true), set_config('work_mem', '256MB', true)${timeout}`);
}

/**
 * A stream's watermark: everything created up to `at` is rolled up (null: nothing yet). A metric stream built by a
 * first computation for conversion and count metrics only holds no value columns (`withValues` false).
 */
export interface Watermark {
  at: Date | null;
  withValues: boolean;
}
export type Watermarks = Map<string, Watermark>;

type WatermarkRow = { stream: string; rolled_up_to: string | Date | null; with_values: boolean };
const toWatermarks = (rows: WatermarkRow[]): Watermarks =>
  new Map(rows.map((r) => [r.stream, { at: r.rolled_up_to === null ? null : new Date(r.rolled_up_to), withValues: r.with_values }]));

/** A stream's watermark time (null when not rolled up yet). */
export const rolledUpTo = (marks: Watermarks, stream: string): Date | null => marks.get(stream)?.at ?? null;

/**
 * A metric's watermark for metrics that need (`values`) or do not need the value columns: a rollup without them does
 * not serve a value metric, which reads the event as never rolled up (and the job rebuilds it).
 */
export const metricWatermark = (marks: Watermarks, eventName: string, values: boolean): Date | null => {
  const mark = marks.get(metricStream(eventName));
  return mark === undefined || (values && !mark.withValues) ? null : mark.at;
};

/**
 * Locks the watermark rows of the given streams (creating missing ones), so that concurrent refreshes of one
 * experiment, from any process, take turns and never roll a window up twice. Rows are taken in stream order, so two
 * refreshes cannot deadlock. Once the rows exist (every refresh after the first), it is one statement.
 */
export async function lockWatermarks(tx: Executor, experimentId: string, streams: string[]): Promise<Watermarks> {
  const lock = async () => toWatermarks(await queryRows<WatermarkRow>(tx, sql`
    SELECT stream, rolled_up_to, with_values FROM ${resultWatermarks}
    WHERE experiment_id = ${experimentId} AND stream = ANY(${sql.param(streams)}::text[])
    ORDER BY stream FOR UPDATE`));
  const held = await lock();
  if (streams.every((s) => held.has(s))) return held;
  await tx.execute(sql`
    INSERT INTO ${resultWatermarks} (experiment_id, stream)
    SELECT ${experimentId}, s FROM unnest(${sql.param(streams)}::text[]) AS s ORDER BY s
    ON CONFLICT DO NOTHING`);
  return lock();
}

export async function readWatermarks(db: Executor, experimentId: string): Promise<Watermarks> {
  return toWatermarks(await queryRows<WatermarkRow>(db, sql`
    SELECT stream, rolled_up_to, with_values FROM ${resultWatermarks} WHERE experiment_id = ${experimentId}`));
}

/**
 * Moves streams' watermarks (rows locked by lockWatermarks). `withValues`, given by a metric's first computation,
 * records whether the rollup holds the value columns; a later window keeps what the stream has.
 */
export async function setWatermarks(tx: Executor, experimentId: string, streams: string[], upTo: Date, withValues?: boolean): Promise<void> {
  await tx.execute(sql`
    UPDATE ${resultWatermarks} SET rolled_up_to = ${upTo.toISOString()}::timestamptz, with_values = coalesce(${withValues ?? null}::boolean, with_values)
    WHERE experiment_id = ${experimentId} AND stream = ANY(${sql.param(streams)}::text[])`);
}

/** Forgets a metric's rollup (its days), before a rebuild that adds what the old one left out. */
export async function clearMetricDays(tx: Executor, experimentId: string, eventName: string): Promise<void> {
  await tx.execute(sql`DELETE FROM ${resultVariantDays} WHERE experiment_id = ${experimentId} AND event_name = ${eventName}`);
}

export async function rollUpAssignments(tx: Executor, experimentId: string, variantIds: string[], w: CreatedWindow): Promise<void> {
  await tx.execute(sql`
    INSERT INTO ${resultAssignmentDays} (experiment_id, variant_id, day, users)
    SELECT ${experimentId}, variant_id, day, users FROM (${assignmentsPerVariantDay(experimentId, variantIds, w)}) s
    ON CONFLICT (experiment_id, variant_id, day) DO UPDATE SET users = ${resultAssignmentDays}.users + excluded.users`);
}

/**
 * Adds the context values of a window's assignments to result_context_values, in one statement. An attribute whose
 * distinct values (rolled up plus new) would pass CONTEXT_VALUES_LIMIT is marked over the limit and dropped: an id or
 * an email says nothing about a dimension of traffic.
 */
export async function rollUpContexts(tx: Executor, experimentId: string, variantIds: string[], w: CreatedWindow): Promise<void> {
  await tx.execute(sql`
    WITH fresh AS MATERIALIZED (${assignmentContextValues(experimentId, variantIds, w)}),
    known AS (
      SELECT attribute, count(DISTINCT value) AS n FROM ${resultContextValues}
      WHERE experiment_id = ${experimentId} AND attribute IN (SELECT attribute FROM fresh) GROUP BY attribute
    ),
    over AS (
      SELECT f.attribute FROM fresh f LEFT JOIN known k USING (attribute)
      GROUP BY f.attribute, k.n HAVING coalesce(k.n, 0) + count(DISTINCT f.value) > ${CONTEXT_VALUES_LIMIT}
      UNION SELECT attribute FROM ${resultContextOverLimit} WHERE experiment_id = ${experimentId}
    ),
    marked AS (
      INSERT INTO ${resultContextOverLimit} (experiment_id, attribute) SELECT ${experimentId}, attribute FROM over ON CONFLICT DO NOTHING
    ),
    dropped AS (
      DELETE FROM ${resultContextValues} WHERE experiment_id = ${experimentId} AND attribute IN (SELECT attribute FROM over)
    )
    INSERT INTO ${resultContextValues} (experiment_id, attribute, value, variant_id, users)
    SELECT ${experimentId}, attribute, value, variant_id, users FROM fresh WHERE attribute NOT IN (SELECT attribute FROM over)
    ON CONFLICT (experiment_id, attribute, value, variant_id) DO UPDATE SET users = ${resultContextValues}.users + excluded.users`);
}

/** Records the users a window shows exposed to another variant than their assignment (the first sighting is kept). */
export async function rollUpExposures(tx: Executor, experimentId: string, variantIds: string[], w: CreatedWindow): Promise<void> {
  await tx.execute(sql`
    INSERT INTO ${resultExcludedUsers} (experiment_id, user_id, variant_id, first_seen)
    SELECT ${experimentId}, user_id, variant_id, first_seen FROM (${conflictingExposures(experimentId, variantIds, w)}) c
    ON CONFLICT (experiment_id, user_id) DO NOTHING`);
}

/** Users excluded from the analysis: those recorded by the rollup plus those the events since its watermark show. */
export async function excludedUsers(
  db: Executor, experimentId: string, variantIds: string[], watermark: Date | null,
): Promise<Array<{ userId: string; variantId: string }>> {
  const rows = await queryRows<{ user_id: string; variant_id: string }>(db, sql`
    SELECT user_id, variant_id FROM ${resultExcludedUsers} WHERE experiment_id = ${experimentId}
    UNION
    SELECT user_id, variant_id FROM (${conflictingExposures(experimentId, variantIds, { after: watermark, upTo: null })}) c`);
  return rows.map((r) => ({ userId: r.user_id, variantId: r.variant_id }));
}

/**
 * Assignment days: the rollup up to the watermark plus the assignments made since, read directly. `excluded` users'
 * assignments are reported apart (they stay in the sample-ratio check, not in the analysis).
 */
export async function assignmentDays(
  db: Executor, experimentId: string, variantIds: string[], watermark: Date | null, excluded: string[],
): Promise<{ analysed: AssignmentDay[]; excluded: AssignmentDay[] }> {
  type Row = { variant_id: string; day: string; users: number };
  const toDay = (r: Row): AssignmentDay => ({ variantId: r.variant_id, day: r.day, users: Number(r.users) });
  const all = await queryRows<Row>(db, sql`
    SELECT variant_id, day::text AS day, sum(users)::bigint AS users FROM (
      SELECT variant_id, day, users FROM ${resultAssignmentDays} WHERE experiment_id = ${experimentId}
      UNION ALL
      SELECT variant_id, day, users FROM (${assignmentsPerVariantDay(experimentId, variantIds, { after: watermark, upTo: null })}) tail
    ) d GROUP BY variant_id, day ORDER BY day`);
  if (excluded.length === 0) return { analysed: all.map(toDay), excluded: [] };
  const out = await queryRows<Row>(db, sql`SELECT variant_id, day::text AS day, users FROM (${assignmentDaysOfUsers(experimentId, excluded)}) x ORDER BY day`);
  const minus = new Map(out.map((r) => [`${r.variant_id}/${r.day}`, Number(r.users)]));
  const analysed = all.map(toDay).map((d) => ({ ...d, users: d.users - (minus.get(`${d.variantId}/${d.day}`) ?? 0) }));
  return { analysed, excluded: out.map(toDay) };
}

export async function contextCounts(
  db: Executor, experimentId: string, variantIds: string[], watermark: Date | null,
): Promise<{ counts: ContextCount[]; overLimit: string[] }> {
  const [counts, over] = [
    await queryRows<{ attribute: string; value: string; variant_id: string; users: number }>(db, sql`
      SELECT attribute, value, variant_id, sum(users)::bigint AS users FROM (
        SELECT attribute, value, variant_id, users FROM ${resultContextValues} WHERE experiment_id = ${experimentId}
        UNION ALL
        SELECT attribute, value, variant_id, users FROM (${assignmentContextValues(experimentId, variantIds, { after: watermark, upTo: null })}) tail
      ) c WHERE attribute NOT IN (SELECT attribute FROM ${resultContextOverLimit} WHERE experiment_id = ${experimentId})
      GROUP BY attribute, value, variant_id`),
    await queryRows<{ attribute: string }>(db, sql`SELECT attribute FROM ${resultContextOverLimit} WHERE experiment_id = ${experimentId}`),
  ];
  return {
    counts: counts.map((r) => ({ attribute: r.attribute, value: r.value, variantId: r.variant_id, users: Number(r.users) })),
    overLimit: over.map((r) => r.attribute),
  };
}

/** Current per-user totals of a metric, from the events (the analyses by user are cached). */
function userTotalsSql(experimentId: string, eventName: string): SQL {
  return sql`
    SELECT user_id, sum(event_count)::bigint AS event_count, sum(value_sum)::float8 AS value_sum
    FROM (${countedEventsPerUserDay(experimentId, [eventName], ALL_TIME)}) e GROUP BY user_id`;
}

/** Leaves the excluded users out of a relation with a user_id column. */
const notExcluded = (column: SQL, excluded: string[]): SQL =>
  excluded.length === 0 ? sql`TRUE` : sql`NOT (${column} = ANY(${sql.param(excluded)}::text[]))`;

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

/** A metric's statistics per value of an assignment-context attribute and variant. */
export async function segmentStats(
  db: Executor, experimentId: string, attribute: string, eventName: string, excluded: string[],
): Promise<SegmentStats[]> {
  const rows = await queryRows<GroupRow & { segment: string | null; variant_id: string }>(db, sql`
    SELECT s.segment, s.variant_id, ${groupColumns}
    FROM (${assignmentSegments(experimentId, attribute)}) s
    LEFT JOIN (${userTotalsSql(experimentId, eventName)}) u USING (user_id)
    WHERE ${notExcluded(sql`s.user_id`, excluded)}
    GROUP BY s.segment, s.variant_id`);
  return rows.map((r) => ({ segment: r.segment, variantId: r.variant_id, ...toGroupStats(r) }));
}

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
    LEFT JOIN (${userTotalsSql(experimentA, eventName)}) u USING (user_id)
    WHERE ${notExcluded(sql`s.user_id`, excluded)}
    GROUP BY s.variant_a, s.variant_b`);
  return rows.map((r) => ({ variantA: r.variant_a, variantB: r.variant_b, ...toGroupStats(r) }));
}

export type CovariateKind = 'indicator' | 'count' | 'value';

const COVARIATE: Record<CovariateKind, SQL> = {
  indicator: sql`1.0`,
  count: sql`event_count::float8`,
  value: sql`value_sum`,
};

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
    LEFT JOIN (${userTotalsSql(experimentId, eventName)}) y USING (user_id)
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

/** The snapshot of a repeatable-read transaction, for other transactions to read the same data (PostgreSQL only). */
export async function exportSnapshot(tx: Executor): Promise<string> {
  const [{ id }] = await queryRows<{ id: string }>(tx, sql`SELECT pg_export_snapshot() AS id`);
  return id;
}

/** Makes a just-begun repeatable-read transaction read an exported snapshot (its first statement). */
export async function importSnapshot(tx: Executor, snapshot: string): Promise<void> {
  // SET TRANSACTION takes no parameters; the id comes from pg_export_snapshot, and is checked anyway.
  if (!/^[0-9A-F]+-[0-9A-F]+-[0-9]+$/i.test(snapshot)) throw new Error(`unexpected snapshot id ${snapshot}`);
  await tx.execute(sql.raw(`SET TRANSACTION SNAPSHOT '${snapshot}'`));
}
