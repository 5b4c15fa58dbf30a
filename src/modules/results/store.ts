/**
 * The results' own storage: the rollup tables (result_*), their watermarks and the snapshots of a read. Every number
 * comes from tracking's counting owner (`armStats`, tracking/read-model.ts); this store adds what it computes for a
 * window to the rollup and, on a read, adds the rollup and what tracking counts since the watermark.
 */
import { sql } from 'drizzle-orm';
import { CONTEXT_VALUES_LIMIT } from '../../analysis/domain.js';
import { queryRows, type Executor } from '../../db/client.js';
import { resultAssignmentDays, resultContextOverLimit, resultContextValues, resultExcludedUsers, resultUserTotals, resultVariantDays, resultWatermarks } from '../../db/schema/results.js';
import { armStats, type CreatedWindow, type DeltaScope, type UserRange, type UserTotals, type WindowUserTotal } from '../tracking/read-model.js';

import type { AssignmentDay, ContextCount, CupedSums, GroupStats, MetricDay, SegmentStats } from '../../analysis/types.js';

export type { CreatedWindow, UserRange };
export type { AssignmentDay, ContextCount, CupedSums, GroupStats, MetricDay, SegmentStats };
/** The counting owner's metric reads, as the rollup and the reads use them (and test/results/rollup.test.ts). */
export const { metricDeltasFromStart, metricDeltasWithUserTotals, untaggedBefore, userRanges, userSplits } = armStats;
const { ALL_TIME } = armStats;
/** How a metric's passes from the start read it, decided once for all its ranges. */
export type PassPlan = Required<Pick<DeltaScope, 'values' | 'untagged'>>;
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

/** What the rollup holds for one read: the part of each stream up to its watermark (see `readRollup`). */
export interface StoredRollup {
  marks: Watermarks;
  excluded: Array<{ userId: string; variantId: string }>;
  assignments: AssignmentDay[];
  contexts: { counts: ContextCount[]; overLimit: string[] };
  /** Per event name asked for (every name present). */
  metrics: Map<string, MetricDay[]>;
}

/**
 * Everything the rollup holds for a read of the experiment, in one statement (a read then adds what tracking counts
 * since each watermark): watermarks, excluded users, assignment days, context values and the attributes over the
 * limit, and the metric days of the given event names. JSON carries the numbers exactly (float8 is written in its
 * shortest exact form, as the driver's text).
 */
export async function readRollup(db: Executor, experimentId: string, eventNames: string[]): Promise<StoredRollup> {
  type Json<T> = T[];
  const [row] = await queryRows<{
    marks: Json<{ stream: string; at: string | null; values: boolean }>;
    excluded: Json<{ u: string; v: string }>;
    assignments: Json<{ v: string; d: string; n: number }>;
    contexts: Json<{ a: string; x: string; v: string; n: number }>;
    over: Json<string>;
    metrics: Json<{ e: string; v: string; d: string; c: number; n: number; q: number; s: number; w: number }>;
  }>(db, sql`
    SELECT
      (SELECT coalesce(json_agg(json_build_object('stream', stream, 'at', rolled_up_to, 'values', with_values)), '[]')
       FROM ${resultWatermarks} WHERE experiment_id = ${experimentId}) AS marks,
      (SELECT coalesce(json_agg(json_build_object('u', user_id, 'v', variant_id)), '[]')
       FROM ${resultExcludedUsers} WHERE experiment_id = ${experimentId}) AS excluded,
      (SELECT coalesce(json_agg(json_build_object('v', variant_id, 'd', day::text, 'n', users)), '[]')
       FROM ${resultAssignmentDays} WHERE experiment_id = ${experimentId}) AS assignments,
      (SELECT coalesce(json_agg(json_build_object('a', attribute, 'x', value, 'v', variant_id, 'n', users)), '[]')
       FROM ${resultContextValues} WHERE experiment_id = ${experimentId}) AS contexts,
      (SELECT coalesce(json_agg(attribute), '[]') FROM ${resultContextOverLimit} WHERE experiment_id = ${experimentId}) AS over,
      (SELECT coalesce(json_agg(json_build_object('e', event_name, 'v', variant_id, 'd', day::text, 'c', converters, 'n', event_count,
                                                  'q', count_square_delta, 's', value_sum, 'w', value_square_delta)), '[]')
       FROM ${resultVariantDays} WHERE experiment_id = ${experimentId} AND event_name = ANY(${sql.param(eventNames)}::text[])) AS metrics`);
  const metrics = new Map<string, MetricDay[]>(eventNames.map((n) => [n, []]));
  for (const m of row.metrics) {
    metrics.get(m.e)?.push({ variantId: m.v, day: m.d, converters: Number(m.c), eventCount: Number(m.n), countSquares: Number(m.q), valueSum: Number(m.s), valueSquares: Number(m.w) });
  }
  return {
    marks: new Map(row.marks.map((m) => [m.stream, { at: m.at === null ? null : new Date(m.at), withValues: m.values }])),
    excluded: row.excluded.map((x) => ({ userId: x.u, variantId: x.v })),
    assignments: row.assignments.map((a) => ({ variantId: a.v, day: a.d, users: Number(a.n) })),
    contexts: { counts: row.contexts.map((c) => ({ attribute: c.a, value: c.x, variantId: c.v, users: Number(c.n) })), overLimit: row.over },
    metrics,
  };
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

/** Adds the assignments made in a window to result_assignment_days. */
export async function rollUpAssignments(tx: Executor, experimentId: string, variantIds: string[], w: CreatedWindow): Promise<void> {
  const days = await armStats.assignmentDays(tx, experimentId, variantIds, w);
  if (days.length === 0) return;
  await tx.execute(sql`
    INSERT INTO ${resultAssignmentDays} (experiment_id, variant_id, day, users)
    SELECT ${experimentId}, d.variant_id, d.day, d.users
    FROM unnest(${sql.param(days.map((d) => d.variantId))}::uuid[], ${sql.param(days.map((d) => d.day))}::date[], ${sql.param(days.map((d) => d.users))}::bigint[])
      AS d(variant_id, day, users)
    ON CONFLICT (experiment_id, variant_id, day) DO UPDATE SET users = ${resultAssignmentDays}.users + excluded.users`);
}

/**
 * Adds the context values of a window's assignments to result_context_values, in one statement. An attribute whose
 * distinct values (rolled up plus new) would pass CONTEXT_VALUES_LIMIT is marked over the limit and dropped: an id or
 * an email says nothing about a dimension of traffic.
 */
export async function rollUpContexts(tx: Executor, experimentId: string, variantIds: string[], w: CreatedWindow): Promise<void> {
  const { counts, overLimit } = await armStats.contextCounts(tx, experimentId, variantIds, w, { limit: CONTEXT_VALUES_LIMIT });
  if (counts.length === 0 && overLimit.length === 0) return;
  await tx.execute(sql`
    WITH fresh AS MATERIALIZED (
      SELECT * FROM unnest(${sql.param(counts.map((c) => c.attribute))}::text[], ${sql.param(counts.map((c) => c.value))}::text[],
                           ${sql.param(counts.map((c) => c.variantId))}::uuid[], ${sql.param(counts.map((c) => c.users))}::bigint[])
        AS f(attribute, value, variant_id, users)
    ),
    known AS (
      SELECT attribute, count(DISTINCT value) AS n FROM ${resultContextValues}
      WHERE experiment_id = ${experimentId} AND attribute IN (SELECT attribute FROM fresh) GROUP BY attribute
    ),
    over AS (
      SELECT f.attribute FROM fresh f LEFT JOIN known k USING (attribute)
      GROUP BY f.attribute, k.n HAVING coalesce(k.n, 0) + count(DISTINCT f.value) > ${CONTEXT_VALUES_LIMIT}
      UNION SELECT unnest(${sql.param(overLimit)}::text[])
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
  const found = await armStats.conflictingExposures(tx, experimentId, variantIds, w);
  if (found.length === 0) return;
  await tx.execute(sql`
    INSERT INTO ${resultExcludedUsers} (experiment_id, user_id, variant_id, first_seen)
    SELECT ${experimentId}, x.user_id, x.variant_id, x.first_seen
    FROM unnest(${sql.param(found.map((x) => x.userId))}::text[], ${sql.param(found.map((x) => x.variantId))}::uuid[],
                ${sql.param(found.map((x) => x.firstSeen))}::timestamptz[]) AS x(user_id, variant_id, first_seen)
    ON CONFLICT (experiment_id, user_id) DO NOTHING`);
}

/** Users excluded from the analysis: those recorded by the rollup plus those the events since its watermark show. */
export async function excludedUsers(
  db: Executor, experimentId: string, variantIds: string[], watermark: Date | null, rolledUp?: StoredRollup['excluded'],
): Promise<Array<{ userId: string; variantId: string }>> {
  const stored = rolledUp ?? (await queryRows<{ user_id: string; variant_id: string }>(db, sql`
    SELECT user_id, variant_id FROM ${resultExcludedUsers} WHERE experiment_id = ${experimentId}`)).map((r) => ({ userId: r.user_id, variantId: r.variant_id }));
  const out = new Map(stored.map((r) => [`${r.userId}\u0000${r.variantId}`, r]));
  for (const x of await armStats.conflictingExposures(db, experimentId, variantIds, { after: watermark, upTo: null })) {
    out.set(`${x.userId}\u0000${x.variantId}`, { userId: x.userId, variantId: x.variantId });
  }
  return [...out.values()];
}

/** Adds per-key counts in the order given (the rollup first, then the tail), keeping the first-seen order of keys. */
function addUp<T extends { users: number }>(lists: T[][], key: (x: T) => string): T[] {
  const out = new Map<string, T>();
  for (const list of lists) {
    for (const x of list) {
      const into = out.get(key(x));
      if (into) into.users += x.users;
      else out.set(key(x), { ...x });
    }
  }
  return [...out.values()];
}

const byDay = <T extends { day: string }>(list: T[]): T[] => list.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));

/**
 * Assignment days: the rollup up to the watermark plus the assignments made since, read directly. `excluded` users'
 * assignments are reported apart (they stay in the sample-ratio check, not in the analysis).
 */
export async function assignmentDays(
  db: Executor, experimentId: string, variantIds: string[], watermark: Date | null, excluded: string[], rolledUp?: AssignmentDay[],
): Promise<{ analysed: AssignmentDay[]; excluded: AssignmentDay[] }> {
  const stored = rolledUp ?? (await queryRows<{ variant_id: string; day: string; users: number }>(db, sql`
    SELECT variant_id, day::text AS day, users FROM ${resultAssignmentDays} WHERE experiment_id = ${experimentId}`))
    .map((r): AssignmentDay => ({ variantId: r.variant_id, day: r.day, users: Number(r.users) }));
  const tail = await armStats.assignmentDays(db, experimentId, variantIds, { after: watermark, upTo: null });
  const all = byDay(addUp([stored, tail], (d) => `${d.variantId}/${d.day}`));
  if (excluded.length === 0) return { analysed: all, excluded: [] };
  const out = await armStats.assignmentDaysOfUsers(db, experimentId, excluded);
  const minus = new Map(out.map((d) => [`${d.variantId}/${d.day}`, d.users]));
  const analysed = all.map((d) => ({ ...d, users: d.users - (minus.get(`${d.variantId}/${d.day}`) ?? 0) }));
  return { analysed, excluded: out };
}

/** Context counts: the rollup plus the assignments made since its watermark, less the attributes over the limit. */
export async function contextCounts(
  db: Executor, experimentId: string, variantIds: string[], watermark: Date | null, rolledUp?: StoredRollup['contexts'],
): Promise<{ counts: ContextCount[]; overLimit: string[] }> {
  const stored = rolledUp?.counts ?? (await queryRows<{ attribute: string; value: string; variant_id: string; users: number }>(db, sql`
    SELECT attribute, value, variant_id, users FROM ${resultContextValues} WHERE experiment_id = ${experimentId}`))
    .map((r): ContextCount => ({ attribute: r.attribute, value: r.value, variantId: r.variant_id, users: Number(r.users) }));
  const { counts: tail } = await armStats.contextCounts(db, experimentId, variantIds, { after: watermark, upTo: null });
  const overLimit = rolledUp?.overLimit ?? (await queryRows<{ attribute: string }>(db, sql`
    SELECT attribute FROM ${resultContextOverLimit} WHERE experiment_id = ${experimentId}`)).map((r) => r.attribute);
  const over = new Set(overLimit);
  const counts = addUp([stored, tail], (c) => JSON.stringify([c.attribute, c.value, c.variantId])).filter((c) => !over.has(c.attribute));
  return { counts, overLimit };
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

/**
 * The users' kept totals of the experiment's metrics as of their watermark (result_user_totals): the `prior` of a
 * window or a read after it, which then reads one row per user of its own events instead of the users' earlier
 * events. Probed per (user, event name) of the window: no other condition on the event name, which the planner would
 * take for the index's second column and leave the user to a filter over every row of the metric.
 */
const keptTotals = (experimentId: string) => sql`
  SELECT user_id, event_name, event_count, value_sum FROM ${resultUserTotals} WHERE experiment_id = ${experimentId}`;

/**
 * A family's day deltas in a window after its watermark, from the window's events and the kept totals (one range),
 * with what the window adds to its users' kept totals (addWindowUserTotals), from the same read.
 */
export function metricWindowDeltas(
  db: Executor, experimentId: string, eventNames: string[], w: { after: Date; upTo: Date }, { range, untagged }: { range?: UserRange; untagged?: boolean } = {},
): Promise<{ days: Map<string, MetricDay[]>; users: WindowUserTotal[] }> {
  return armStats.metricWindowDeltas(db, experimentId, eventNames, w, { range, untagged, prior: keptTotals(experimentId) });
}

/**
 * Adds a window's counted totals (metricWindowDeltas, over all its ranges) to its users' kept totals, in the
 * transaction that moves the family's watermark.
 */
export async function addWindowUserTotals(tx: Executor, experimentId: string, users: WindowUserTotal[]): Promise<void> {
  for (let at = 0; at < users.length; at += TOTALS_PER_STATEMENT) {
    const part = users.slice(at, at + TOTALS_PER_STATEMENT);
    await tx.execute(sql`
      INSERT INTO ${resultUserTotals} (experiment_id, event_name, user_id, event_count, value_sum)
      SELECT ${experimentId}, u.name, u.id, u.n, u.s
      FROM unnest(${sql.param(part.map((u) => u.eventName))}::text[], ${sql.param(part.map((u) => u.userId))}::text[],
                  ${sql.param(part.map((u) => u.eventCount))}::bigint[], ${sql.param(part.map((u) => u.valueSum))}::float8[]) AS u(name, id, n, s)
      ON CONFLICT (experiment_id, event_name, user_id) DO UPDATE SET
        event_count = ${resultUserTotals}.event_count + excluded.event_count,
        value_sum = ${resultUserTotals}.value_sum + excluded.value_sum`);
  }
}

/** Kept totals are written by user: a pass asked without ids (the definitions' one-event totals) cannot be kept. */
const missingIds = (): never => { throw new Error('kept user totals need the pass to return the users\' ids'); };

/** Rows of kept totals written per statement by replaceUserTotals and addWindowUserTotals. */
const TOTALS_PER_STATEMENT = 10_000;

/**
 * Replaces a metric's kept totals by those of its first computation (the users with counted events up to its end,
 * from the same passes; without the value sums, 0), in the transaction that sets its watermark.
 */
export async function replaceUserTotals(tx: Executor, experimentId: string, eventName: string, groups: UserTotals[]): Promise<void> {
  await tx.execute(sql`DELETE FROM ${resultUserTotals} WHERE experiment_id = ${experimentId} AND event_name = ${eventName}`);
  const users = groups.flatMap((g) => (g.userIds ?? missingIds()).map((id, i) => ({ id, count: g.counts[i], sum: g.sums?.[i] ?? 0 })));
  for (let at = 0; at < users.length; at += TOTALS_PER_STATEMENT) {
    const part = users.slice(at, at + TOTALS_PER_STATEMENT);
    await tx.execute(sql`
      INSERT INTO ${resultUserTotals} (experiment_id, event_name, user_id, event_count, value_sum)
      SELECT ${experimentId}, ${eventName}, u.id, u.n, u.s
      FROM unnest(${sql.param(part.map((u) => u.id))}::text[], ${sql.param(part.map((u) => u.count))}::bigint[], ${sql.param(part.map((u) => u.sum))}::float8[]) AS u(id, n, s)`);
  }
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
 * events since, counted by tracking from them and the users' kept totals (the same snapshot), minus the whole history of the excluded users (their deltas telescope: what
 * every window added for them equals their deltas computed at once). Added in that order, per variant and day.
 */
export async function metricDays(
  db: Executor, experimentId: string, eventNames: string[], watermark: Date | null, excluded: string[], rolledUp?: StoredRollup['metrics'],
): Promise<Map<string, MetricDay[]>> {
  const stored = rolledUp ?? (await readRollup(db, experimentId, eventNames)).metrics;
  // After the watermark, from the tail's events and the kept totals; from the start, one ordered pass.
  const untagged = await untaggedBefore(db, eventNames, null);
  const scope = watermark !== null ? { prior: keptTotals(experimentId), untagged } : { untagged };
  const tail = await armStats.metricDeltas(db, experimentId, eventNames, { after: watermark, upTo: null }, scope);
  const minus = excluded.length === 0 ? null
    : await armStats.metricDeltas(db, experimentId, eventNames, ALL_TIME, { users: excluded, ordered: watermark === null });
  const out = new Map<string, MetricDay[]>();
  for (const name of eventNames) {
    out.set(name, sumMetricDays([stored.get(name) ?? [], tail.get(name)!], minus === null ? [] : [minus.get(name)!]));
  }
  return out;
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
