import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/client.js';
import type { RolloutGuardrailDecisionRow, RolloutScheduleRow, RolloutStageRow } from '../../db/schema/rollout-schedules.js';
import { SYSTEM_ACTOR, type AuditActor, type AuditLog } from '../../platform/audit.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict, DomainError, NotFound, Unprocessable, type Loc } from '../../platform/errors.js';
import { FLAG_NOT_FOUND, type FlagsService } from '../feature-flags/service.js';
import type { GuardrailCounts, GuardrailWindows } from '../tracking/guardrail-read.js';
import { storedGuardrails, testGuardrails, toDecisionView, windowsFor, type Evaluation } from './guardrails.js';
import { firstOutOfOrder, isOpen, TRANSITIONS, transitionRefused, type ScheduleAction } from './lifecycle.js';
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
import { FOREIGN_KEY_VIOLATION, isUniqueViolation, sqlState } from '../../db/errors.js';

export const SCHEDULE_NOT_FOUND = 'Rollout schedule not found';
export const STAGE_NOT_FOUND = 'Rollout stage not found';
export const SCHEDULE_CLOSED = 'A completed or cancelled schedule cannot be changed.';
export const STAGE_APPLIED = 'This stage has already been applied and cannot be changed.';
export const LAST_PENDING_STAGE = 'An active or paused schedule keeps at least one pending stage. Cancel the schedule instead.';
export const NO_PENDING_STAGE = 'A schedule needs at least one pending stage to be activated.';
export const ANOTHER_ACTIVE = 'Another rollout schedule of this flag is active. Pause or cancel it first.';
export const ACTIVE_CANNOT_DELETE = 'An active schedule cannot be deleted. Pause or cancel it first.';
export const ADVANCE_NEEDS_ACTIVE = 'Only stages of an active schedule can be advanced.';
export const NOT_NEXT_STAGE = 'Only the next pending stage can be advanced.';
export const TOO_MANY_STAGES = `A schedule has at most ${MAX_STAGES} stages`;
export const TIME_IN_PAST = 'scheduled_at must be in the future';
export const TIMES_OUT_OF_ORDER = 'Stage times must not go backwards: a stage cannot be scheduled before an earlier stage';
export const GUARDRAIL_DEGRADED =
  'A guardrail degraded during the current stage: the stage was not applied, the flag was rolled back and the schedule paused.';
export const SCHEDULE_CHANGED = 'The schedule changed while its guardrails were checked. Try again.';

const ENTITY = 'rollout_schedule';

interface Loaded {
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
  };
}

const stageSnapshot = (s: Pick<RolloutStageRow, 'percentage' | 'scheduledAt'>) => ({
  percentage: s.percentage,
  scheduled_at: s.scheduledAt?.toISOString() ?? null,
});
const pendingOf = (stages: RolloutStageRow[]) => stages.filter((s) => !s.appliedAt);
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

export interface RolloutSchedulesDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  flags: Pick<FlagsService, 'getFlag' | 'changeRollout'>;
  /** Tracking's read model: guardrail event counts of the flag's exposed users and of the baseline. */
  guardrailCounts(windows: GuardrailWindows): Promise<GuardrailCounts>;
  /** Alerts subscribers of every guardrail decision (notifications); never throws. */
  announce(notice: GuardrailNotice): void;
}

export interface GuardrailNotice {
  schedule_id: string;
  schedule_name: string;
  flag_id: string;
  flag_key: string;
  decision: 'advance' | 'rollback';
  rollout_percentage: number;
  degraded_metrics: string[];
}

export type RolloutSchedulesService = ReturnType<typeof createRolloutSchedulesService>;

export function createRolloutSchedulesService(deps: RolloutSchedulesDeps) {
  const { db, audit, clock, flags } = deps;

  async function load(exec: Executor, id: string, lock = false): Promise<Loaded> {
    const row = lock ? await store.lockSchedule(exec, id) : await store.findSchedule(exec, id);
    if (!row) throw new NotFound(SCHEDULE_NOT_FOUND);
    const stages = await store.stagesOf(exec, [id]);
    return { row, stages, decisions: await store.decisionsOf(exec, [id]) };
  }

  async function stageById(exec: Executor, id: string): Promise<RolloutStageRow> {
    const stage = await store.findStage(exec, id);
    if (!stage) throw new NotFound(STAGE_NOT_FOUND);
    return stage;
  }

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

  async function touch(tx: Executor, id: string): Promise<Loaded> {
    await store.updateSchedule(tx, id, { updatedAt: clock.now() });
    return load(tx, id);
  }

  /** The guardrail test of a guarded schedule now, or null (not guarded, or nothing to test yet). */
  async function evaluate({ row, stages, decisions }: Loaded, now: Date): Promise<Evaluation | null> {
    if (!row.guardrails) return null;
    const due = windowsFor(stages, decisions, now);
    if (!due) return null;
    const counts = await deps.guardrailCounts({ flagId: row.flagId, eventNames: row.guardrails.metrics.map((m) => m.event_name), ...due.windows });
    return { ...due, confidence: row.guardrails.confidence, ...testGuardrails(row.guardrails, counts) };
  }

  /** Pauses an active schedule the caller has locked, with the entry naming the cause (a rollback of its flag). */
  async function pauseLocked(tx: Executor, id: string, actor: AuditActor | null, details: Record<string, unknown>): Promise<void> {
    await store.updateSchedule(tx, id, { status: 'paused', updatedAt: clock.now() });
    await audit.record(tx, actor, {
      action: 'rollout_schedule_pause', entityType: ENTITY, entityId: id, before: { status: 'active' }, after: { status: 'paused' }, details,
    });
  }

  /** Records a guardrail decision with its audit entry, in the transaction that acts on it. */
  async function recordDecision(
    tx: Executor, actor: AuditActor, scheduleId: string, e: Evaluation,
    decision: { kind: 'advance' | 'rollback'; nextStageId: string | null; rolloutPercentage: number; automatic: boolean },
  ): Promise<void> {
    const id = randomUUID();
    await store.insertDecision(tx, {
      id, scheduleId, decision: decision.kind, stageId: e.stage.id, nextStageId: decision.nextStageId, automatic: decision.automatic,
      confidence: e.confidence, rolloutPercentage: decision.rolloutPercentage, ...e.windows, metrics: e.metrics, createdAt: clock.now(),
    });
    await audit.record(tx, actor, {
      action: 'rollout_guardrail_decision', entityType: ENTITY, entityId: scheduleId,
      details: {
        decision_id: id, decision: decision.kind, stage_id: e.stage.id, next_stage_id: decision.nextStageId, automatic: decision.automatic,
        rollout_percentage: decision.rolloutPercentage, degraded_metrics: e.metrics.filter((m) => m.degraded).map((m) => m.event_name),
      },
    });
  }

  function announce(row: RolloutScheduleRow, flagKey: string, e: Evaluation, kind: 'advance' | 'rollback', rolloutPercentage: number): void {
    deps.announce({
      schedule_id: row.id, schedule_name: row.name, flag_id: row.flagId, flag_key: flagKey, decision: kind,
      rollout_percentage: rolloutPercentage, degraded_metrics: e.metrics.filter((m) => m.degraded).map((m) => m.event_name),
    });
  }

  /**
   * A guardrail degraded: under the flag's row lock, lowers the rollout to the guardrails' rollback_percentage, pauses
   * the schedule and records the decision. Refused (409) when the schedule is no longer active or another stage was
   * applied since the test (the next check tests that one).
   */
  async function guardrailRollback(actor: AuditActor, loaded: Loaded, e: Evaluation, automatic: boolean): Promise<void> {
    const { row } = loaded;
    let percentage = 0;
    const details = { cause: 'guardrail_rollback', rollout_schedule_id: row.id, automatic };
    const flag = await flags.changeRollout(row.flagId, actor, details, async (current, tx) => {
      // A rollback never raises the rollout (the flag may have been lowered by hand below rollback_percentage).
      percentage = Math.min(current.rollout_percentage, row.guardrails!.rollback_percentage);
      const locked = await load(tx, row.id, true);
      if (locked.row.status !== 'active') throw new Conflict(ADVANCE_NEEDS_ACTIVE);
      if (locked.stages.filter((s) => s.appliedAt).at(-1)?.id !== e.stage.id) throw new Conflict(SCHEDULE_CHANGED);
      await pauseLocked(tx, row.id, actor, details);
      await recordDecision(tx, actor, row.id, e, { kind: 'rollback', nextStageId: null, rolloutPercentage: percentage, automatic });
      return { percentage };
    });
    announce(row, flag.key, e, 'rollback', percentage);
  }

  /**
   * Applies one stage. The schedule is read again and the stage marked under the flag's row lock, in the transaction
   * that sets the rollout (flag row, then schedule row: the order every rollout change takes). A safety rollback
   * changes the flag under the same lock and pauses the schedule in its transaction, so a stage either lands before
   * a rollback (which then has the last word) or sees the schedule paused and is refused: never a rollout raised
   * after a rollback. A guarded schedule first tests its guardrails on the current stage: a degradation rolls back
   * instead (409), otherwise the advance is recorded as a decision with the test.
   */
  async function applyStage(actor: AuditActor, scheduleId: string, stageId: string, now: Date, automatic: boolean): Promise<ScheduleView> {
    const loaded = await load(db, scheduleId);
    const { row } = loaded;
    assertAdvanceable(loaded, stageId);
    const evaluation = await evaluate(loaded, now);
    if (evaluation?.degraded) {
      await guardrailRollback(actor, loaded, evaluation, automatic);
      throw new Conflict(GUARDRAIL_DEGRADED);
    }
    let view: ScheduleView | undefined;
    let percentage = 0;
    const details = { rollout_schedule_id: scheduleId, rollout_stage_id: stageId, automatic };
    const flag = await flags.changeRollout(row.flagId, actor, details, async (_flag, tx) => {
      const locked = await load(tx, scheduleId, true);
      const stage = assertAdvanceable(locked, stageId);
      percentage = stage.percentage;
      if (evaluation) {
        if (locked.stages.filter((s) => s.appliedAt).at(-1)?.id !== evaluation.stage.id) throw new Conflict(SCHEDULE_CHANGED);
        await recordDecision(tx, actor, scheduleId, evaluation, { kind: 'advance', nextStageId: stageId, rolloutPercentage: percentage, automatic });
      }
      await store.updateStage(tx, stageId, { appliedAt: now, updatedAt: clock.now() });
      await audit.record(tx, actor, {
        action: 'rollout_stage_advance', entityType: ENTITY, entityId: scheduleId,
        details: { stage_id: stageId, flag_id: row.flagId, percentage: stage.percentage, automatic },
      });
      if (pendingOf(locked.stages).length === 1) {
        await store.updateSchedule(tx, scheduleId, { status: 'completed', updatedAt: clock.now() });
        await audit.record(tx, actor, {
          action: 'rollout_schedule_complete', entityType: ENTITY, entityId: scheduleId,
          before: { status: 'active' }, after: { status: 'completed' },
        });
        view = toScheduleView(await load(tx, scheduleId));
      } else {
        view = toScheduleView(await touch(tx, scheduleId));
      }
      return { percentage: stage.percentage };
    });
    if (evaluation) announce(row, flag.key, evaluation, 'advance', percentage);
    return view!;
  }

  /** The stage, when it is the next pending stage of an active schedule; the refusal otherwise. */
  function assertAdvanceable({ row, stages }: Loaded, stageId: string): RolloutStageRow {
    const stage = stages.find((s) => s.id === stageId);
    if (!stage) throw new NotFound(STAGE_NOT_FOUND);
    if (stage.appliedAt) throw new Conflict(STAGE_APPLIED);
    if (row.status !== 'active') throw new Conflict(ADVANCE_NEEDS_ACTIVE);
    if (pendingOf(stages)[0]?.id !== stage.id) throw new Conflict(NOT_NEXT_STAGE);
    return stage;
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
      const now = clock.now();
      const inputs = body.stages ?? [];
      const guardrails = storedGuardrails(body.guardrails, ['body', 'guardrails']) ?? null;
      assertStageTimes(inputs.map((s, i) => ({ at: parseTime(s.scheduled_at), loc: ['body', 'stages', i, 'scheduled_at'] })), now);
      try {
        return await db.transaction(async (tx) => {
          const row = await store.insertSchedule(tx, {
            id: randomUUID(), flagId: body.flag_id, name: body.name, description: body.description ?? null,
            status: 'draft', ownerId: actor.id, guardrails, createdAt: now, updatedAt: now,
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

    /** Manual advance: applies this stage now, timed or not, when it is the next pending stage of an active schedule. */
    async advanceStage(actor: AuditActor, stageId: string): Promise<ScheduleView> {
      const stage = await stageById(db, stageId);
      return applyStage(actor, stage.scheduleId, stageId, clock.now(), false);
    },

    /**
     * Scheduler job: applies every stage whose time has come, in order, as the system actor (a schedule that fell
     * behind catches up stage by stage, each with its own audit entries; a guarded one, one stage per run). A
     * schedule changed concurrently by a user (paused, stage edited) is left for the next run; any other failure
     * fails the run after the others are done.
     */
    async runDue(now: Date): Promise<void> {
      const failed: string[] = [];
      for (const id of await store.dueScheduleIds(db, now)) {
        try {
          for (;;) {
            const { row, stages } = await load(db, id);
            const next = pendingOf(stages)[0];
            if (row.status !== 'active' || !next?.scheduledAt || next.scheduledAt.getTime() > now.getTime()) break;
            await applyStage(SYSTEM_ACTOR, id, next.id, now, true);
            // A guarded schedule that fell behind takes one stage per run: the next one is applied only after its
            // guardrails have seen the exposure of this one.
            if (row.guardrails) break;
          }
        } catch (error) {
          if (!(error instanceof DomainError)) failed.push(id);
        }
      }
      if (failed.length > 0) throw new Error(`Rollout stages could not be applied for schedules ${failed.join(', ')}`);
    },

    /**
     * Scheduler job: tests the guardrails of every active guarded schedule on its current stage and rolls back each
     * one that degraded, as the system actor (mSPRT: looking every minute keeps the false-alarm rate at most
     * 1 − confidence). A schedule changed concurrently is left for the next run; any other failure fails the run
     * after the others are done.
     */
    async runGuardrails(now: Date): Promise<void> {
      const failed: string[] = [];
      for (const id of await store.guardedActiveScheduleIds(db)) {
        try {
          const loaded = await load(db, id);
          const evaluation = await evaluate(loaded, now);
          if (evaluation?.degraded) await guardrailRollback(SYSTEM_ACTOR, loaded, evaluation, true);
        } catch (error) {
          if (!(error instanceof DomainError)) failed.push(id);
        }
      }
      if (failed.length > 0) throw new Error(`Guardrails could not be checked for schedules ${failed.join(', ')}`);
    },

    /**
     * For safety rollback: pauses the flag's active schedule so no later stage raises the rollout again. Pass the
     * transaction that holds the flag's row lock and changes its rollout (flags.changeRollout), so a stage in flight
     * cannot land after the rollback.
     */
    async pauseActiveOfFlag(tx: Executor, flagId: string, actor: AuditActor | null, details: Record<string, unknown>): Promise<string[]> {
      const rows = await store.lockActiveSchedulesOfFlag(tx, flagId);
      for (const row of rows) await pauseLocked(tx, row.id, actor, details);
      return rows.map((r) => r.id);
    },
  };
}
