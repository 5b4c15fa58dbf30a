/**
 * Stage application and guardrail decisions: a stage is applied (by hand or when due) under the flag's row lock,
 * after a guarded schedule's guardrails are tested on the current stage; a degradation rolls the flag back and pauses
 * the schedule instead. Also the safety module's hook that pauses a flag's active schedule on a rollback.
 */
import { randomUUID } from 'node:crypto';
import type { Executor } from '../../db/client.js';
import type { RolloutScheduleRow, RolloutStageRow, StoredGuardrails } from '../../db/schema/rollout-schedules.js';
import { SYSTEM_ACTOR, type AuditActor } from '../../platform/audit.js';
import { Conflict, DomainError, NotFound } from '../../platform/errors.js';
import { combinedAggregates, projectUserValues } from '../../analysis/definitions.js';
import { isGuardrailKind } from '../../analysis/definition-guardrails.js';
import type { VariantUserValues } from '../../analysis/types.js';
import { degradedOf, testGuardrails, windowsFor, type DefinitionInputs, type Evaluation } from './guardrails.js';
import { ENTITY, load, pendingOf, stageById, toScheduleView, touch, type Loaded } from './loaded.js';
import { ADVANCE_NEEDS_ACTIVE, GUARDRAIL_DEGRADED, NOT_NEXT_STAGE, SCHEDULE_CHANGED, STAGE_APPLIED, STAGE_NOT_FOUND } from './messages.js';
import type { ScheduleView } from './schemas.js';
import type { RolloutSchedulesDeps } from './deps.js';
import * as store from './store.js';

export function createStageAdvance(deps: RolloutSchedulesDeps) {
  const { db, audit, clock, flags } = deps;

  /** The metric library guardrails' definitions as stored now, with their per-user values in both windows (one read). */
  async function definitionInputs(flagId: string, ids: string[], windows: Evaluation['windows']): Promise<DefinitionInputs> {
    if (ids.length === 0) return new Map();
    const settings = await deps.definitions.analysisSettings(ids);
    const tested = settings.filter((d) => isGuardrailKind(d.kind));
    const { aggregates, columns } = combinedAggregates(tested);
    const read = tested.length ? await deps.guardrailUserValues({ flagId, aggregates, ...windows }) : null;
    const groups: VariantUserValues[] = read
      ? [{ variantId: 'baseline', ...read.baseline }, { variantId: 'exposed', ...read.exposed }]
      : [{ variantId: 'baseline', users: 0, rows: [] }, { variantId: 'exposed', users: 0, rows: [] }];
    return new Map(settings.map((d) => {
      const [baseline, exposed] = columns.has(d.id) ? projectUserValues(groups, columns.get(d.id)!) : groups;
      return [d.id, { definition: d, baseline, exposed }];
    }));
  }

  /** The guardrail test of a guarded schedule now, or null (not guarded, or nothing to test yet). */
  async function evaluate({ row, stages, decisions }: Loaded, now: Date): Promise<Evaluation | null> {
    if (!row.guardrails) return null;
    const due = windowsFor(stages, decisions, now);
    if (!due) return null;
    const eventNames = row.guardrails.metrics.flatMap((m) => (m.event_name === undefined ? [] : [m.event_name]));
    const definitionIds = row.guardrails.metrics.flatMap((m) => (m.metric_definition_id === undefined ? [] : [m.metric_definition_id]));
    const [counts, definitions] = await Promise.all([
      eventNames.length ? deps.guardrailCounts({ flagId: row.flagId, eventNames, ...due.windows }) : { exposed: {}, baseline: {} },
      definitionInputs(row.flagId, definitionIds, due.windows),
    ]);
    return { ...due, confidence: row.guardrails.confidence, ...testGuardrails(row.guardrails, counts, definitions) };
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
    tx: Executor, actor: AuditActor, { id: scheduleId, guardrails }: { id: string; guardrails: StoredGuardrails }, e: Evaluation,
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
        rollout_percentage: decision.rolloutPercentage, ...degradedOf(guardrails, e.metrics),
      },
    });
  }

  function announce(row: RolloutScheduleRow, flagKey: string, e: Evaluation, kind: 'advance' | 'rollback', rolloutPercentage: number): void {
    deps.announce({
      schedule_id: row.id, schedule_name: row.name, flag_id: row.flagId, flag_key: flagKey, environment: row.environment, decision: kind,
      rollout_percentage: rolloutPercentage, ...degradedOf(row.guardrails!, e.metrics),
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
      await recordDecision(tx, actor, { id: row.id, guardrails: row.guardrails! }, e, { kind: 'rollback', nextStageId: null, rolloutPercentage: percentage, automatic });
      return { percentage };
    }, row.environment);
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
        await recordDecision(tx, actor, { id: scheduleId, guardrails: row.guardrails! }, evaluation, { kind: 'advance', nextStageId: stageId, rolloutPercentage: percentage, automatic });
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
        view = toScheduleView(await touch(tx, scheduleId, clock.now()));
      }
      return { percentage: stage.percentage };
    }, row.environment);
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


  return {
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
