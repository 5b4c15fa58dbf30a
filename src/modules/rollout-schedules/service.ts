/** Rollout schedules: CRUD, stages and the state machine; stage application and guardrail decisions are in advance.ts. */
import { randomUUID } from 'node:crypto';
import type { Executor } from '../../db/client.js';
import { FOREIGN_KEY_VIOLATION, isUniqueViolation, sqlState } from '../../db/errors.js';
import type { RolloutScheduleRow, RolloutStageRow } from '../../db/schema/rollout-schedules.js';
import type { AuditActor } from '../../platform/audit.js';
import { Conflict, NotFound, Unprocessable, type Loc } from '../../platform/errors.js';
import { FLAG_NOT_FOUND } from '../feature-flags/service.js';
import { createStageAdvance } from './advance.js';
import type { GuardrailNotice, RolloutSchedulesDeps } from './deps.js';
import { storedGuardrails } from './guardrails.js';
import { firstOutOfOrder, isOpen, TRANSITIONS, transitionRefused, type ScheduleAction } from './lifecycle.js';
import { ENTITY, load, pendingOf, stageById, stageSnapshot, toScheduleView, touch as touchAt, type Loaded } from './loaded.js';
import {
  ACTIVE_CANNOT_DELETE,
  ANOTHER_ACTIVE,
  LAST_PENDING_STAGE,
  NO_PENDING_STAGE,
  SCHEDULE_CLOSED,
  STAGE_APPLIED,
  STAGE_NOT_FOUND,
  TIME_IN_PAST,
  TIMES_OUT_OF_ORDER,
  TOO_MANY_STAGES,
} from './messages.js';
import {
  MAX_STAGES,
  type ScheduleCreate,
  type ScheduleListQuery,
  type ScheduleUpdate,
  type ScheduleView,
  type StageInput,
  type StageUpdate,
} from './schemas.js';
import * as store from './store.js';

export * from './messages.js';

const parseTime = (value: string | null | undefined): Date | null => (value == null ? null : new Date(value));

function invalidTime(loc: Loc, msg: string): Unprocessable {
  return new Unprocessable({ type: 'value_error', loc, msg });
}

/**
 * Checks the pending stages as they would be after a write. `loc` marks the stages being written: only their times
 * must lie in the future (an untouched stage whose time has passed is simply due), and an order violation is
 * reported at the written stage that causes it.
 */
function assertStageTimes(stages: Array<{ at: Date | null; loc?: Loc }>, now: Date): void {
  for (const s of stages) if (s.loc && s.at && s.at.getTime() <= now.getTime()) throw invalidTime(s.loc, TIME_IN_PAST);
  const i = firstOutOfOrder(stages.map((s) => s.at));
  if (i >= 0) throw invalidTime((stages[i].loc ?? stages.find((s) => s.loc)?.loc)!, TIMES_OUT_OF_ORDER);
}

export type { GuardrailNotice, RolloutSchedulesDeps };

export type RolloutSchedulesService = ReturnType<typeof createRolloutSchedulesService>;

export function createRolloutSchedulesService(deps: RolloutSchedulesDeps) {
  const { db, audit, clock, flags } = deps;
  const advance = createStageAdvance(deps);
  const touch = (tx: Executor, id: string) => touchAt(tx, id, clock.now());

  /** Locks the stage's schedule and finds the stage again under the lock (it may have gone meanwhile). */
  async function lockStage(tx: Executor, stageId: string): Promise<Loaded & { stage: RolloutStageRow }> {
    const { scheduleId } = await stageById(tx, stageId);
    const loaded = await load(tx, scheduleId, true);
    const stage = loaded.stages.find((s) => s.id === stageId);
    if (!stage) throw new NotFound(STAGE_NOT_FOUND);
    return { ...loaded, stage };
  }

  function assertOpen(row: RolloutScheduleRow): void {
    if (!isOpen(row.status)) throw new Conflict(SCHEDULE_CLOSED);
  }

  async function transition(actor: AuditActor, id: string, action: ScheduleAction): Promise<ScheduleView> {
    try {
      return await db.transaction(async (tx) => {
        const loaded = await load(tx, id, true);
        const next = TRANSITIONS[action][loaded.row.status];
        if (!next) throw new Conflict(transitionRefused(loaded.row.status, action));
        if (next === loaded.row.status) return toScheduleView(loaded);
        if (next === 'active' && pendingOf(loaded.stages).length === 0) throw new Conflict(NO_PENDING_STAGE);
        await store.updateSchedule(tx, id, { status: next, updatedAt: clock.now() });
        await audit.record(tx, actor, {
          action: `rollout_schedule_${action}`, entityType: ENTITY, entityId: id,
          before: { status: loaded.row.status }, after: { status: next },
        });
        return toScheduleView(await load(tx, id));
      });
    } catch (error) {
      // rollout_schedules_one_active_per_flag: two running schedules would overwrite each other's percentages.
      if (isUniqueViolation(error)) throw new Conflict(ANOTHER_ACTIVE);
      throw error;
    }
  }

  return {
    async create(actor: AuditActor, body: ScheduleCreate): Promise<ScheduleView> {
      await flags.getFlag(body.flag_id);
      // Named only when the body names one: a schedule without acts on whichever environment is the default.
      const environment = body.environment === undefined ? null : await deps.environments.resolve(body.environment, ['body', 'environment'], true);
      const now = clock.now();
      const inputs = body.stages ?? [];
      const guardrails = storedGuardrails(body.guardrails, ['body', 'guardrails']) ?? null;
      assertStageTimes(inputs.map((s, i) => ({ at: parseTime(s.scheduled_at), loc: ['body', 'stages', i, 'scheduled_at'] })), now);
      try {
        return await db.transaction(async (tx) => {
          if (guardrails) await deps.definitions.checkGuardrailDefinitions(tx, guardrails.metrics, ['body', 'guardrails', 'metrics']);
          const row = await store.insertSchedule(tx, {
            id: randomUUID(), flagId: body.flag_id, name: body.name, description: body.description ?? null,
            status: 'draft', ownerId: actor.id, guardrails, environment, createdAt: now, updatedAt: now,
          });
          await store.insertStages(tx, inputs.map((s, i) => ({
            id: randomUUID(), scheduleId: row.id, sequence: i + 1, percentage: s.percentage,
            scheduledAt: parseTime(s.scheduled_at), createdAt: now, updatedAt: now,
          })));
          const loaded = await load(tx, row.id);
          await audit.record(tx, actor, {
            action: 'rollout_schedule_create', entityType: ENTITY, entityId: row.id,
            after: {
              flag_id: row.flagId, name: row.name, description: row.description, status: row.status, stages: loaded.stages.map(stageSnapshot),
              ...(guardrails ? { guardrails } : {}),
            },
          });
          return toScheduleView(loaded);
        });
      } catch (error) {
        // The flag was deleted between the check and the insert.
        if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw new NotFound(FLAG_NOT_FOUND);
        throw error;
      }
    },

    async list(query: ScheduleListQuery) {
      const { rows, total } = await store.listSchedules(db, { flagId: query.flag_id, status: query.status }, query);
      const ids = rows.map((r) => r.id);
      const stages = await store.stagesOf(db, ids);
      const decisions = await store.decisionsOf(db, ids);
      const items = rows.map((row) => toScheduleView({
        row, stages: stages.filter((s) => s.scheduleId === row.id), decisions: decisions.filter((d) => d.scheduleId === row.id),
      }));
      return { items, total, skip: query.skip, limit: query.limit };
    },

    get: async (id: string): Promise<ScheduleView> => toScheduleView(await load(db, id)),

    async update(actor: AuditActor, id: string, body: ScheduleUpdate): Promise<ScheduleView> {
      return db.transaction(async (tx) => {
        const loaded = await load(tx, id, true);
        assertOpen(loaded.row);
        const before: Partial<Pick<RolloutScheduleRow, 'name' | 'description' | 'guardrails'>> = {};
        const after: typeof before = {};
        if (body.name !== undefined && body.name !== loaded.row.name) [before.name, after.name] = [loaded.row.name, body.name];
        if (body.description !== undefined && body.description !== loaded.row.description) {
          [before.description, after.description] = [loaded.row.description, body.description];
        }
        const guardrails = storedGuardrails(body.guardrails, ['body', 'guardrails']);
        if (guardrails) await deps.definitions.checkGuardrailDefinitions(tx, guardrails.metrics, ['body', 'guardrails', 'metrics']);
        if (guardrails !== undefined && JSON.stringify(guardrails) !== JSON.stringify(loaded.row.guardrails)) {
          [before.guardrails, after.guardrails] = [loaded.row.guardrails, guardrails];
        }
        if (Object.keys(after).length === 0) return toScheduleView(loaded);
        await store.updateSchedule(tx, id, { ...after, updatedAt: clock.now() });
        await audit.record(tx, actor, { action: 'rollout_schedule_update', entityType: ENTITY, entityId: id, before, after });
        return toScheduleView(await load(tx, id));
      });
    },

    async delete(actor: AuditActor, id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const { row, stages } = await load(tx, id, true);
        if (row.status === 'active') throw new Conflict(ACTIVE_CANNOT_DELETE);
        await store.deleteSchedule(tx, id);
        await audit.record(tx, actor, {
          action: 'rollout_schedule_delete', entityType: ENTITY, entityId: id,
          before: { flag_id: row.flagId, name: row.name, status: row.status, stages: stages.map(stageSnapshot) },
        });
      });
    },

    activate: (actor: AuditActor, id: string) => transition(actor, id, 'activate'),
    pause: (actor: AuditActor, id: string) => transition(actor, id, 'pause'),
    cancel: (actor: AuditActor, id: string) => transition(actor, id, 'cancel'),

    async addStage(actor: AuditActor, scheduleId: string, body: StageInput): Promise<ScheduleView> {
      const now = clock.now();
      return db.transaction(async (tx) => {
        const { row, stages } = await load(tx, scheduleId, true);
        assertOpen(row);
        if (stages.length >= MAX_STAGES) throw new Unprocessable({ type: 'value_error', loc: ['body'], msg: TOO_MANY_STAGES });
        const at = parseTime(body.scheduled_at);
        assertStageTimes([...pendingOf(stages).map((s) => ({ at: s.scheduledAt })), { at, loc: ['body', 'scheduled_at'] }], now);
        const stageId = randomUUID();
        await store.insertStages(tx, [{
          id: stageId, scheduleId, sequence: (stages.at(-1)?.sequence ?? 0) + 1, percentage: body.percentage,
          scheduledAt: at, createdAt: now, updatedAt: now,
        }]);
        await audit.record(tx, actor, {
          action: 'rollout_stage_add', entityType: ENTITY, entityId: scheduleId,
          after: stageSnapshot({ percentage: body.percentage, scheduledAt: at }), details: { stage_id: stageId },
        });
        return toScheduleView(await touch(tx, scheduleId));
      });
    },

    async updateStage(actor: AuditActor, stageId: string, body: StageUpdate): Promise<ScheduleView> {
      const now = clock.now();
      return db.transaction(async (tx) => {
        const loaded = await lockStage(tx, stageId);
        const { row, stages, stage } = loaded;
        assertOpen(row);
        if (stage.appliedAt) throw new Conflict(STAGE_APPLIED);
        const next = {
          percentage: body.percentage ?? stage.percentage,
          scheduledAt: body.scheduled_at === undefined ? stage.scheduledAt : parseTime(body.scheduled_at),
        };
        if (body.scheduled_at !== undefined) {
          assertStageTimes(
            pendingOf(stages).map((s) => (s.id === stageId ? { at: next.scheduledAt, loc: ['body', 'scheduled_at'] } : { at: s.scheduledAt })),
            now,
          );
        }
        if (next.percentage === stage.percentage && next.scheduledAt?.getTime() === stage.scheduledAt?.getTime()) {
          return toScheduleView(loaded);
        }
        await store.updateStage(tx, stageId, { ...next, updatedAt: now });
        await audit.record(tx, actor, {
          action: 'rollout_stage_update', entityType: ENTITY, entityId: row.id,
          before: stageSnapshot(stage), after: stageSnapshot(next), details: { stage_id: stageId },
        });
        return toScheduleView(await touch(tx, row.id));
      });
    },

    async deleteStage(actor: AuditActor, stageId: string): Promise<void> {
      await db.transaction(async (tx) => {
        const { row, stages, stage } = await lockStage(tx, stageId);
        assertOpen(row);
        if (stage.appliedAt) throw new Conflict(STAGE_APPLIED);
        if (row.status !== 'draft' && pendingOf(stages).length === 1) throw new Conflict(LAST_PENDING_STAGE);
        await store.deleteStage(tx, stageId);
        await audit.record(tx, actor, {
          action: 'rollout_stage_delete', entityType: ENTITY, entityId: row.id,
          before: stageSnapshot(stage), details: { stage_id: stageId },
        });
        await touch(tx, row.id);
      });
    },

    ...advance,
  };
}
