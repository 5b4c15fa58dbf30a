import { sql } from 'drizzle-orm';
import { queryRows, type Executor } from '../../db/client.js';
import type { EventAggregate } from '../../analysis/types.js';

/** Per-user counts of one event name over a group of users: users, sum of counts, sum of squared counts. */
export interface EventCountStats {
  users: number;
  sum: number;
  sum_squares: number;
}

export interface GuardrailCounts {
  /** Users who got the flag on in the stage window (a tracked event tagged with the flag), counts over that window. */
  exposed: Record<string, EventCountStats>;
  /** Users with any tracked event in the baseline window, counts over that window. */
  baseline: Record<string, EventCountStats>;
}

export interface GuardrailWindows {
  flagId: string;
  eventNames: string[];
  exposedFrom: Date;
  exposedTo: Date;
  baselineFrom: Date;
  baselineTo: Date;
}

const toNumber = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/**
 * Per event name, counts per user of a group of users in [from, to): the group is the users of tracked events
 * tagged with `flagId` (or of any tracked event when flagId is null) in the window; a user of the group without
 * the event counts as 0. One grouped statement per group, over the window's events only (created_at BRIN index).
 */
async function countsOf(db: Executor, flagId: string | null, eventNames: string[], from: Date, to: Date): Promise<Record<string, EventCountStats>> {
  const names = sql.param(eventNames);
  const flagFilter = flagId === null ? sql`` : sql`AND feature_flag_id = ${flagId}`;
  const rows = await queryRows<{ users: unknown; event_name: string | null; total: unknown; total_squares: unknown }>(db, sql`
    WITH grp AS (
      SELECT DISTINCT user_id FROM events
      WHERE kind = 'track' AND user_id IS NOT NULL AND created_at >= ${from.toISOString()} AND created_at < ${to.toISOString()} ${flagFilter}
    ),
    per_user AS (
      SELECT e.user_id, e.event_name, count(*)::float8 AS c FROM events e JOIN grp ON grp.user_id = e.user_id
      WHERE e.created_at >= ${from.toISOString()} AND e.created_at < ${to.toISOString()} AND e.event_name = ANY(${names}::text[])
      GROUP BY e.user_id, e.event_name
    ),
    sums AS (
      SELECT event_name, sum(c) AS total, sum(c * c) AS total_squares FROM per_user GROUP BY event_name
    )
    SELECT (SELECT count(*) FROM grp) AS users, sums.event_name, sums.total, sums.total_squares
    FROM (SELECT 1) one LEFT JOIN sums ON true`);
  const users = toNumber(rows[0]?.users);
  const out: Record<string, EventCountStats> = {};
  for (const name of eventNames) out[name] = { users, sum: 0, sum_squares: 0 };
  for (const row of rows) {
    if (row.event_name === null) continue;
    out[row.event_name] = { users, sum: toNumber(row.total), sum_squares: toNumber(row.total_squares) };
  }
  return out;
}

/** The read model of guarded rollouts: guardrail event counts of the flag's exposed users and of the baseline. */
export async function guardrailCounts(db: Executor, w: GuardrailWindows): Promise<GuardrailCounts> {
  const [exposed, baseline] = await Promise.all([
    countsOf(db, w.flagId, w.eventNames, w.exposedFrom, w.exposedTo),
    countsOf(db, null, w.eventNames, w.baselineFrom, w.baselineTo),
  ]);
  return { exposed, baseline };
}

/** One group's per-user values: `users` in the group, one row per user of it with an event of the aggregates. */
export interface GroupUserValues {
  users: number;
  /** Values in the aggregates' order; a user of the group without a row has 0 for each. */
  rows: number[][];
}

export interface GuardrailValueWindows extends Omit<GuardrailWindows, 'eventNames'> {
  /** Per-user aggregates (count or value sum of one event each) the metric library's guardrails read. */
  aggregates: EventAggregate[];
}

/**
 * As countsOf, the per-user values of several aggregates instead of one event's count totals: the group is the same
 * (users of tracked events tagged with `flagId`, or of any tracked event, in [from, to)), and each user of it with at
 * least one of the aggregates' events in the window has a row.
 */
async function valuesOf(db: Executor, flagId: string | null, aggregates: EventAggregate[], from: Date, to: Date): Promise<GroupUserValues> {
  const names = sql.param([...new Set(aggregates.map((a) => a.event_name))]);
  const flagFilter = flagId === null ? sql`` : sql`AND feature_flag_id = ${flagId}`;
  const columns = sql.join(aggregates.map((a, i) => (a.aggregate === 'count'
    ? sql`count(*) FILTER (WHERE e.event_name = ${a.event_name})::float8 AS ${sql.raw(`v${i}`)}`
    : sql`coalesce(sum(e.value) FILTER (WHERE e.event_name = ${a.event_name}), 0)::float8 AS ${sql.raw(`v${i}`)}`)), sql`, `);
  const rows = await queryRows<Record<string, unknown> & { users: unknown; user_id: string | null }>(db, sql`
    WITH grp AS (
      SELECT DISTINCT user_id FROM events
      WHERE kind = 'track' AND user_id IS NOT NULL AND created_at >= ${from.toISOString()} AND created_at < ${to.toISOString()} ${flagFilter}
    ),
    per_user AS (
      SELECT e.user_id, ${columns} FROM events e JOIN grp ON grp.user_id = e.user_id
      WHERE e.created_at >= ${from.toISOString()} AND e.created_at < ${to.toISOString()} AND e.event_name = ANY(${names}::text[])
      GROUP BY e.user_id
    )
    SELECT (SELECT count(*) FROM grp) AS users, per_user.*
    FROM (SELECT 1) one LEFT JOIN per_user ON true`);
  return {
    users: toNumber(rows[0]?.users),
    rows: rows.filter((r) => r.user_id !== null).map((r) => aggregates.map((_, i) => toNumber(r[`v${i}`]))),
  };
}

/** The read model of guarded rollouts on metric library definitions: per-user values of the exposed users and of the baseline. */
export async function guardrailUserValues(db: Executor, w: GuardrailValueWindows): Promise<{ exposed: GroupUserValues; baseline: GroupUserValues }> {
  const [exposed, baseline] = await Promise.all([
    valuesOf(db, w.flagId, w.aggregates, w.exposedFrom, w.exposedTo),
    valuesOf(db, null, w.aggregates, w.baselineFrom, w.baselineTo),
  ]);
  return { exposed, baseline };
}
