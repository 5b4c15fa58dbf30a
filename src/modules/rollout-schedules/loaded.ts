/** A schedule as the service works on it (row, stages, guardrail decisions): loading, locking and the response shape. */
import type { Executor } from '../../db/client.js';
import type { RolloutGuardrailDecisionRow, RolloutScheduleRow, RolloutStageRow } from '../../db/schema/rollout-schedules.js';
import { NotFound } from '../../platform/errors.js';
import { toDecisionView } from './guardrails.js';
import { SCHEDULE_NOT_FOUND, STAGE_NOT_FOUND } from './messages.js';
import type { ScheduleView } from './schemas.js';
import * as store from './store.js';

export const ENTITY = 'rollout_schedule';

export interface Loaded {
  row: RolloutScheduleRow;
  stages: RolloutStageRow[];
  decisions: RolloutGuardrailDecisionRow[];
}

export function toScheduleView({ row, stages, decisions }: Loaded): ScheduleView {
  return {
    id: row.id,
    flag_id: row.flagId,
    name: row.name,
    description: row.description,
    status: row.status,
    owner_id: row.ownerId,
    stages: stages.map((s, i) => ({
      id: s.id,
      position: i + 1,
      percentage: s.percentage,
      scheduled_at: s.scheduledAt?.toISOString() ?? null,
      status: s.appliedAt ? 'applied' : 'pending',
      applied_at: s.appliedAt?.toISOString() ?? null,
    })),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    guardrails: row.guardrails ?? null,
    decisions: decisions.map(toDecisionView),
    ...(row.environment === null ? {} : { environment: row.environment }),
  };
}

export const stageSnapshot = (s: Pick<RolloutStageRow, 'percentage' | 'scheduledAt'>) => ({
  percentage: s.percentage,
  scheduled_at: s.scheduledAt?.toISOString() ?? null,
});
export const pendingOf = (stages: RolloutStageRow[]) => stages.filter((s) => !s.appliedAt);

export async function load(exec: Executor, id: string, lock = false): Promise<Loaded> {
  const row = lock ? await store.lockSchedule(exec, id) : await store.findSchedule(exec, id);
  if (!row) throw new NotFound(SCHEDULE_NOT_FOUND);
  const stages = await store.stagesOf(exec, [id]);
  return { row, stages, decisions: await store.decisionsOf(exec, [id]) };
}

export async function stageById(exec: Executor, id: string): Promise<RolloutStageRow> {
  const stage = await store.findStage(exec, id);
  if (!stage) throw new NotFound(STAGE_NOT_FOUND);
  return stage;
}

/** Marks the schedule changed (updated_at) and loads it again. */
export async function touch(tx: Executor, id: string, now: Date): Promise<Loaded> {
  await store.updateSchedule(tx, id, { updatedAt: now });
  return load(tx, id);
}
