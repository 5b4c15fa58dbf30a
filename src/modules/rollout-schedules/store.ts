import { and, asc, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { queryRows, type Executor } from '../../db/client.js';
import {
  rolloutGuardrailDecisions,
  rolloutSchedules,
  rolloutStages,
  type RolloutGuardrailDecisionRow,
  type RolloutScheduleRow,
  type RolloutScheduleStatus,
  type RolloutStageRow,
} from '../../db/schema/rollout-schedules.js';

export async function insertSchedule(db: Executor, values: typeof rolloutSchedules.$inferInsert): Promise<RolloutScheduleRow> {
  const [row] = await db.insert(rolloutSchedules).values(values).returning();
  return row;
}

export async function insertStages(db: Executor, values: Array<typeof rolloutStages.$inferInsert>): Promise<void> {
  if (values.length > 0) await db.insert(rolloutStages).values(values);
}

export async function findSchedule(db: Executor, id: string): Promise<RolloutScheduleRow | undefined> {
  const [row] = await db.select().from(rolloutSchedules).where(eq(rolloutSchedules.id, id));
  return row;
}

/** Row lock: every change to a schedule or its stages takes turns on the schedule row. */
export async function lockSchedule(db: Executor, id: string): Promise<RolloutScheduleRow | undefined> {
  const [row] = await db.select().from(rolloutSchedules).where(eq(rolloutSchedules.id, id)).for('update');
  return row;
}

export async function findStage(db: Executor, id: string): Promise<RolloutStageRow | undefined> {
  const [row] = await db.select().from(rolloutStages).where(eq(rolloutStages.id, id));
  return row;
}

/** Stages of the given schedules in the order they run. */
export function stagesOf(db: Executor, scheduleIds: string[]): Promise<RolloutStageRow[]> {
  if (scheduleIds.length === 0) return Promise.resolve([]);
  return db
    .select()
    .from(rolloutStages)
    .where(inArray(rolloutStages.scheduleId, scheduleIds))
    .orderBy(asc(rolloutStages.scheduleId), asc(rolloutStages.sequence));
}

export async function listSchedules(
  db: Executor,
  filter: { flagId?: string; status?: RolloutScheduleStatus },
  page: { skip: number; limit: number },
): Promise<{ rows: RolloutScheduleRow[]; total: number }> {
  const conditions: SQL[] = [];
  if (filter.flagId) conditions.push(eq(rolloutSchedules.flagId, filter.flagId));
  if (filter.status) conditions.push(eq(rolloutSchedules.status, filter.status));
  const where = conditions.length ? and(...conditions) : undefined;
  const [rows, [{ total }]] = await Promise.all([
    db.select().from(rolloutSchedules).where(where).orderBy(desc(rolloutSchedules.createdAt), desc(rolloutSchedules.id)).offset(page.skip).limit(page.limit),
    db.select({ total: count() }).from(rolloutSchedules).where(where),
  ]);
  return { rows, total };
}

export async function updateSchedule(db: Executor, id: string, values: Partial<typeof rolloutSchedules.$inferInsert>): Promise<RolloutScheduleRow> {
  const [row] = await db.update(rolloutSchedules).set(values).where(eq(rolloutSchedules.id, id)).returning();
  return row;
}

export async function deleteSchedule(db: Executor, id: string): Promise<void> {
  await db.delete(rolloutSchedules).where(eq(rolloutSchedules.id, id));
}

export async function updateStage(db: Executor, id: string, values: Partial<typeof rolloutStages.$inferInsert>): Promise<RolloutStageRow> {
  const [row] = await db.update(rolloutStages).set(values).where(eq(rolloutStages.id, id)).returning();
  return row;
}

export async function deleteStage(db: Executor, id: string): Promise<void> {
  await db.delete(rolloutStages).where(eq(rolloutStages.id, id));
}

/** Active schedules of a flag, locked (a rollback pauses them). */
export function lockActiveSchedulesOfFlag(db: Executor, flagId: string): Promise<RolloutScheduleRow[]> {
  return db
    .select()
    .from(rolloutSchedules)
    .where(and(eq(rolloutSchedules.flagId, flagId), eq(rolloutSchedules.status, 'active')))
    .orderBy(asc(rolloutSchedules.id))
    .for('update');
}

/** Active schedules whose next pending stage is timed and due at `now`. */
export async function dueScheduleIds(db: Executor, now: Date): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`SELECT s.id FROM ${rolloutSchedules} s
        JOIN LATERAL (
          SELECT st.scheduled_at FROM ${rolloutStages} st
          WHERE st.schedule_id = s.id AND st.applied_at IS NULL
          ORDER BY st.sequence LIMIT 1
        ) next ON true
        WHERE s.status = 'active' AND next.scheduled_at <= ${now.toISOString()}
        ORDER BY s.id`,
  );
  return rows.map((r) => r.id);
}

export async function insertDecision(db: Executor, values: typeof rolloutGuardrailDecisions.$inferInsert): Promise<void> {
  await db.insert(rolloutGuardrailDecisions).values(values);
}

/** Guardrail decisions of the given schedules, oldest first. */
export function decisionsOf(db: Executor, scheduleIds: string[]): Promise<RolloutGuardrailDecisionRow[]> {
  if (scheduleIds.length === 0) return Promise.resolve([]);
  return db
    .select()
    .from(rolloutGuardrailDecisions)
    .where(inArray(rolloutGuardrailDecisions.scheduleId, scheduleIds))
    .orderBy(asc(rolloutGuardrailDecisions.scheduleId), asc(rolloutGuardrailDecisions.createdAt), asc(rolloutGuardrailDecisions.id));
}

/** Active schedules that name guardrails (the partial index rollout_schedules_guarded_active_idx). */
export async function guardedActiveScheduleIds(db: Executor): Promise<string[]> {
  const rows = await db
    .select({ id: rolloutSchedules.id })
    .from(rolloutSchedules)
    .where(and(eq(rolloutSchedules.status, 'active'), sql`${rolloutSchedules.guardrails} IS NOT NULL`))
    .orderBy(asc(rolloutSchedules.id));
  return rows.map((r) => r.id);
}

/** Draft, active and paused schedules with a guardrail naming the metric definition (jsonb containment). */
export function openSchedulesNamingDefinition(db: Executor, definitionId: string): Promise<RolloutScheduleRow[]> {
  return db
    .select()
    .from(rolloutSchedules)
    .where(and(
      inArray(rolloutSchedules.status, ['draft', 'active', 'paused']),
      sql`${rolloutSchedules.guardrails}->'metrics' @> ${JSON.stringify([{ metric_definition_id: definitionId }])}::jsonb`,
    ))
    .orderBy(asc(rolloutSchedules.createdAt), asc(rolloutSchedules.id));
}
