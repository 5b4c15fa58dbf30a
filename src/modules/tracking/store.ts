import { and, eq, inArray, sql } from 'drizzle-orm';
import { queryRows, type Executor } from '../../db/client.js';
import { assignments, events } from '../../db/schema/tracking.js';
import { inPeriod, type CreatedPeriod } from '../../db/paging.js';

export interface EventRow {
  id: string;
  eventName: string;
  userId: string | null;
  experimentId: string | null;
  featureFlagId: string | null;
  variantId: string | null;
  value: number | null;
  metadata: Record<string, unknown> | null;
  kind: 'track' | 'view';
  createdAt: Date;
}

/**
 * One INSERT for many events: ten array parameters unnested server-side, so the statement is parsed once and its
 * size does not grow with the parameter count (a VALUES list would need ten parameters a row).
 */
export async function insertEvents(db: Executor, rows: EventRow[]): Promise<void> {
  if (rows.length === 0) return;
  // sql.param keeps each column one array parameter (a bare JS array would be spread into a list of parameters).
  const col = <K extends keyof EventRow>(k: K) => sql.param(rows.map((r) => r[k]));
  await db.execute(sql`
    INSERT INTO events (id, event_name, user_id, experiment_id, feature_flag_id, variant_id, value, metadata, kind, created_at)
    SELECT * FROM unnest(
      ${col('id')}::uuid[], ${col('eventName')}::text[], ${col('userId')}::text[], ${col('experimentId')}::uuid[],
      ${col('featureFlagId')}::uuid[], ${col('variantId')}::uuid[], ${col('value')}::float8[],
      ${sql.param(rows.map((r) => (r.metadata === null ? null : JSON.stringify(r.metadata))))}::jsonb[], ${col('kind')}::text[],
      ${sql.param(rows.map((r) => r.createdAt.toISOString()))}::timestamptz[])`);
}

/** One string per (experiment, user): the identity of an assignment in maps and batches. */
export const assignmentKey = (experimentId: string, userId: string): string => `${experimentId}\u0000${userId}`;

export interface AssignmentRow {
  id: string;
  experimentId: string;
  variantId: string;
  userId: string;
  context: Record<string, unknown> | null;
  source: 'assign' | 'batch';
  createdAt: Date;
}

export async function findAssignment(db: Executor, experimentId: string, userId: string): Promise<AssignmentRow | undefined> {
  const [row] = await db
    .select()
    .from(assignments)
    .where(and(eq(assignments.experimentId, experimentId), eq(assignments.userId, userId)));
  return row as AssignmentRow | undefined;
}

export async function findAssignmentsForUsers(db: Executor, experimentId: string, userIds: string[]): Promise<AssignmentRow[]> {
  if (userIds.length === 0) return [];
  return (await db
    .select()
    .from(assignments)
    .where(and(eq(assignments.experimentId, experimentId), inArray(assignments.userId, userIds)))) as AssignmentRow[];
}

export async function listUserAssignments(db: Executor, userId: string): Promise<AssignmentRow[]> {
  return (await db.select().from(assignments).where(eq(assignments.userId, userId)).orderBy(assignments.createdAt)) as AssignmentRow[];
}

/** Events of a deleted flag are kept, detached from it. */
export async function detachFlagEvents(db: Executor, flagId: string): Promise<void> {
  await db.execute(sql`UPDATE events SET feature_flag_id = NULL WHERE feature_flag_id = ${flagId}`);
}

/** The most recent stored assignment contexts (segment preview estimates membership on them). */
export async function recentAssignmentContexts(db: Executor, limit: number): Promise<Array<Record<string, unknown>>> {
  const rows = await queryRows<{ user_id: string; context: Record<string, unknown> }>(db, sql`
    SELECT user_id, context FROM assignments WHERE context IS NOT NULL ORDER BY created_at DESC LIMIT ${limit}`);
  return rows.map((r) => ({ user_id: r.user_id, ...r.context }));
}

export interface AssignmentOverlap {
  experimentA: string;
  experimentB: string;
  users: number;
}

/** Users assigned to each pair of the given experiments (pairs without shared users are left out). */
export async function assignmentOverlaps(db: Executor, experimentIds: string[]): Promise<AssignmentOverlap[]> {
  if (experimentIds.length < 2) return [];
  const ids = sql.param(experimentIds);
  const rows = await queryRows<{ experiment_a: string; experiment_b: string; users: number }>(db, sql`
    SELECT a.experiment_id AS experiment_a, b.experiment_id AS experiment_b, count(*)::bigint AS users
    FROM assignments a
    JOIN assignments b ON b.user_id = a.user_id AND b.experiment_id > a.experiment_id AND b.experiment_id = ANY(${ids}::uuid[])
    WHERE a.experiment_id = ANY(${ids}::uuid[])
    GROUP BY 1, 2`);
  return rows.map((r) => ({ experimentA: r.experiment_a, experimentB: r.experiment_b, users: Number(r.users) }));
}

/** Assigned users per experiment among the given ones. */
export async function assignedUsersPerExperiment(db: Executor, experimentIds: string[]): Promise<Map<string, number>> {
  if (experimentIds.length === 0) return new Map();
  const rows = await queryRows<{ experiment_id: string; users: number }>(db, sql`
    SELECT experiment_id, count(*)::bigint AS users FROM assignments
    WHERE experiment_id = ANY(${sql.param(experimentIds)}::uuid[]) GROUP BY experiment_id`);
  return new Map(rows.map((r) => [r.experiment_id, Number(r.users)]));
}

/** Assignments and tracked events (view rows are exposures, not events) per experiment, for export. */
export async function experimentTotals(db: Executor, experimentIds: string[]): Promise<Map<string, { assignments: number; events: number }>> {
  const totals = new Map(experimentIds.map((id) => [id, { assignments: 0, events: 0 }]));
  if (experimentIds.length === 0) return totals;
  const ids = sql.param(experimentIds);
  const [assigned, tracked] = await Promise.all([
    queryRows<{ id: string; n: number }>(db, sql`SELECT experiment_id AS id, count(*)::int AS n FROM assignments WHERE experiment_id = ANY(${ids}::uuid[]) GROUP BY experiment_id`),
    queryRows<{ id: string; n: number }>(db, sql`SELECT experiment_id AS id, count(*)::int AS n FROM events WHERE experiment_id = ANY(${ids}::uuid[]) AND kind = 'track' GROUP BY experiment_id`),
  ]);
  for (const r of assigned) totals.get(r.id)!.assignments = Number(r.n);
  for (const r of tracked) totals.get(r.id)!.events = Number(r.n);
  return totals;
}

/** Events recorded for each flag (the export's total_evaluations). */
export async function flagEventCounts(db: Executor, flagIds: string[]): Promise<Map<string, number>> {
  const counts = new Map(flagIds.map((id) => [id, 0]));
  if (flagIds.length === 0) return counts;
  const rows = await queryRows<{ id: string; n: number }>(db, sql`
    SELECT feature_flag_id AS id, count(*)::int AS n FROM events WHERE feature_flag_id = ANY(${sql.param(flagIds)}::uuid[]) GROUP BY feature_flag_id`);
  for (const r of rows) counts.set(r.id, Number(r.n));
  return counts;
}

/** Assignments and tracked events created in the period (export overview). */
export async function periodCounts(db: Executor, period: CreatedPeriod): Promise<{ assignments: number; events: number }> {
  const [[assigned], [tracked]] = await Promise.all([
    db.select({ n: sql<number>`count(*)::int` }).from(assignments).where(inPeriod(assignments.createdAt, period)),
    db.select({ n: sql<number>`count(*)::int` }).from(events).where(and(eq(events.kind, 'track'), inPeriod(events.createdAt, period))),
  ]);
  return { assignments: Number(assigned.n), events: Number(tracked.n) };
}

/**
 * Many insert-if-absent assignments in two statements: one multi-row INSERT … ON CONFLICT DO NOTHING RETURNING, then
 * one read of the rows that already existed. Returns, for each (experiment, user), the row that holds.
 */
export async function insertAssignmentsIfAbsent(db: Executor, rows: AssignmentRow[]): Promise<Map<string, AssignmentRow>> {
  const held = new Map<string, AssignmentRow>();
  if (rows.length === 0) return held;
  const col = <K extends keyof AssignmentRow>(k: K) => sql.param(rows.map((r) => r[k]));
  type Returned = { id: string; experiment_id: string; variant_id: string; user_id: string; context: Record<string, unknown> | null; source: 'assign' | 'batch'; created_at: string | Date };
  const toRow = (r: Returned): AssignmentRow => ({
    id: r.id, experimentId: r.experiment_id, variantId: r.variant_id, userId: r.user_id, context: r.context, source: r.source, createdAt: new Date(r.created_at),
  });
  const inserted = await queryRows<Returned>(db, sql`
    INSERT INTO assignments (id, experiment_id, variant_id, user_id, context, source, created_at)
    SELECT * FROM unnest(${col('id')}::uuid[], ${col('experimentId')}::uuid[], ${col('variantId')}::uuid[], ${col('userId')}::text[],
      ${sql.param(rows.map((r) => (r.context === null ? null : JSON.stringify(r.context))))}::jsonb[], ${col('source')}::text[],
      ${sql.param(rows.map((r) => r.createdAt.toISOString()))}::timestamptz[])
    ON CONFLICT (experiment_id, user_id) DO NOTHING
    RETURNING id, experiment_id, variant_id, user_id, context, source, created_at`);
  for (const r of inserted) held.set(assignmentKey(r.experiment_id, r.user_id), toRow(r));
  const missing = rows.filter((r) => !held.has(assignmentKey(r.experimentId, r.userId)));
  if (missing.length) {
    const existing = await queryRows<Returned>(db, sql`
      SELECT a.id, a.experiment_id, a.variant_id, a.user_id, a.context, a.source, a.created_at
      FROM assignments a
      JOIN unnest(${sql.param(missing.map((r) => r.experimentId))}::uuid[], ${sql.param(missing.map((r) => r.userId))}::text[]) AS m(experiment_id, user_id)
        ON a.experiment_id = m.experiment_id AND a.user_id = m.user_id`);
    for (const r of existing) held.set(assignmentKey(r.experiment_id, r.user_id), toRow(r));
  }
  return held;
}

/**
 * Users who sent tracked events since `since`, each with the distinct event names they sent (holdout results),
 * most recently active first, at most `limit` users; and how many distinct users were assigned since then.
 */
export async function usersSeenSince(db: Executor, since: Date, limit: number) {
  const [users, [assigned]] = await Promise.all([
    queryRows<{ user_id: string; event_names: string[] }>(db, sql`
      SELECT user_id, array_agg(DISTINCT event_name) AS event_names
      FROM events WHERE kind = 'track' AND user_id IS NOT NULL AND created_at >= ${since.toISOString()}::timestamptz
      GROUP BY user_id ORDER BY max(created_at) DESC LIMIT ${limit}`),
    queryRows<{ n: number }>(db, sql`SELECT count(DISTINCT user_id)::int AS n FROM assignments WHERE created_at >= ${since.toISOString()}::timestamptz`),
  ]);
  return { users: users.map((u) => ({ userId: u.user_id, eventNames: u.event_names })), assignedUsers: Number(assigned.n) };
}
