/**
 * The experiment state machine: every status change (routes and scheduler) goes through `transition`, so the
 * table below is the whole truth about which moves exist.
 */
import type { Db, Executor } from '../../db/client.js';
import { isoMicros } from '../../db/schema/exact-timestamp.js';
import type { ExperimentRow } from '../../db/schema/experiments.js';
import type { ExperimentStatus } from './domain.js';
import { SYSTEM_ACTOR, type AuditActor, type AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict } from '../../platform/errors.js';
import type { ExperimentView } from './schemas.js';
import * as store from './store.js';

export type Transition = 'start' | 'pause' | 'complete' | 'archive' | 'delete';

/** Allowed source states and the target; `delete` removes the experiment (spec: only drafts). */
export const TRANSITIONS: Record<Transition, { from: readonly ExperimentStatus[]; to: ExperimentStatus | null }> = {
  start: { from: ['draft', 'paused'], to: 'active' },
  pause: { from: ['active'], to: 'paused' },
  complete: { from: ['active', 'paused'], to: 'completed' },
  archive: { from: ['draft', 'paused', 'completed'], to: 'archived' },
  delete: { from: ['draft'], to: null },
};

export function transitionRefused(move: Transition, current: ExperimentStatus): string {
  return move === 'delete'
    ? `Only draft experiments can be deleted; this experiment is in ${current} status`
    : `Cannot ${move} an experiment in ${current} status`;
}

export const statusChangeRefused = (current: ExperimentStatus): string =>
  `Change the status with the start, pause, complete and archive routes; this experiment is in ${current} status`;

/**
 * Spec transition table, row "any | complete | start_date is after now": an experiment whose start lies in the
 * future completes from any status, a draft scheduled ahead included (the store moves start_date before end_date).
 * Completed and archived experiments are past completing, so "any" means every state that can still change.
 */
const COMPLETE_WHEN_START_AHEAD: readonly ExperimentStatus[] = ['draft'];

/** The state `move` leads to from `current`, or a 409 naming the current status. */
export function transition(move: Transition, current: ExperimentStatus, startsAhead = false): ExperimentStatus | null {
  const rule = TRANSITIONS[move];
  const allowed = rule.from.includes(current) || (move === 'complete' && startsAhead && COMPLETE_WHEN_START_AHEAD.includes(current));
  if (!allowed) throw new Conflict(transitionRefused(move, current));
  return rule.to;
}

export const END_DATE_PASSED = 'The scheduled end_date has passed; change it with PUT /schedule before starting';

export interface LifecycleDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  /** Alerts subscribers (notification preferences) after a start or completion has committed; never rejects. */
  notifications?: {
    notify(kind: 'experiment_started' | 'experiment_completed', payload: { experiment_id: string; experiment_name: string }): Promise<unknown>;
  };
  /** The experiment row under its lock (404 when there is none). */
  locked(tx: Executor, id: string): Promise<ExperimentRow>;
  /** The response shape of a row, read in `executor`. */
  view(row: ExperimentRow, executor: Executor): Promise<ExperimentView>;
  /** Announces a committed change (caches in every process). */
  changed(id: string): Promise<void>;
}

/**
 * The status moves of the routes (start, pause, complete, archive) and of the scheduler jobs (auto start and auto
 * complete): each goes through `transition` on the locked row, with its audit entry in the same transaction.
 */
export function createLifecycle(deps: LifecycleDeps) {
  const { db, audit, clock, locked, view, changed } = deps;
  const who = (actor: Actor): AuditActor => ({ id: actor.id, username: actor.username });

  /** A lifecycle move on a locked row: the table decides, `apply` writes the new state, the audit entry goes with it. */
  async function applyMove(
    tx: Executor,
    actor: AuditActor,
    row: ExperimentRow,
    name: Transition,
    apply: (to: ExperimentStatus) => Promise<ExperimentRow>,
  ): Promise<ExperimentRow> {
    const startsAhead = row.startDate !== null && Date.parse(String(row.startDate)) > clock.now().getTime();
    const to = transition(name, row.status, startsAhead) as ExperimentStatus;
    const next = await apply(to);
    await audit.record(tx, actor, {
      action: name === 'start' && row.status === 'paused' ? 'experiment_resume' : `experiment_${name}`,
      entityType: 'experiment',
      entityId: row.id,
      before: { status: row.status, start_date: row.startDate, end_date: row.endDate },
      after: { status: next.status, start_date: next.startDate, end_date: next.endDate },
    });
    return next;
  }

  async function move(
    actor: Actor,
    id: string,
    name: Transition,
    apply: (tx: Executor, row: ExperimentRow, to: ExperimentStatus) => Promise<ExperimentRow>,
  ): Promise<ExperimentView> {
    let from: ExperimentStatus | undefined;
    const result = await db.transaction(async (tx) => {
      const row = await locked(tx, id);
      from = row.status;
      return view(await applyMove(tx, who(actor), row, name, (to) => apply(tx, row, to)), tx);
    });
    await changed(id);
    announceMove(name, from, result.id, result.name);
    return result;
  }

  /** Spec "Events" 5: a draft starting and an experiment completing are alerted (a resume is not a start). */
  function announceMove(name: Transition, from: ExperimentStatus | undefined, id: string, experimentName: string): void {
    const payload = { experiment_id: id, experiment_name: experimentName };
    if (name === 'start' && from === 'draft') void deps.notifications?.notify('experiment_started', payload);
    if (name === 'complete') void deps.notifications?.notify('experiment_completed', payload);
  }

  /**
   * A scheduler move: the row is re-read under its lock and skipped when a person changed it since it was listed
   * (started or rescheduled by hand), so the job never fights the routes.
   */
  async function moveIfStillDue(
    id: string,
    name: Transition,
    isDue: (row: ExperimentRow) => boolean,
    apply: (tx: Executor, row: ExperimentRow, to: ExperimentStatus) => Promise<ExperimentRow>,
  ): Promise<void> {
    const moved = await db.transaction(async (tx) => {
      const row = await locked(tx, id);
      if (!isDue(row)) return undefined;
      await applyMove(tx, SYSTEM_ACTOR, row, name, (to) => apply(tx, row, to));
      return row;
    });
    if (moved) {
      await changed(id);
      announceMove(name, moved.status, moved.id, moved.name);
    }
  }

  /** Runs `fn` for every id; one experiment's failure does not stop the others, but fails the job run. */
  async function eachDue(ids: string[], fn: (id: string) => Promise<unknown>): Promise<void> {
    const failures: unknown[] = [];
    for (const id of ids) {
      await fn(id).catch((error: unknown) => failures.push(error));
    }
    if (failures.length) {
      throw new Error(`${failures.length} of ${ids.length} experiments failed: ${(failures[0] as Error).message}`);
    }
  }

  return {
    /** draft -> active (start_date now unless a scheduled start already passed); paused -> active (start_date kept). */
    start: (actor: Actor, id: string) =>
      move(actor, id, 'start', (tx, row, to) => {
        if (row.status === 'paused') return store.updateExperiment(tx, id, { status: to, updatedAt: clock.now() });
        const now = isoMicros(clock.now());
        if (row.endDate && row.endDate <= now) throw new Conflict(END_DATE_PASSED);
        const startDate = row.startDate && row.startDate <= now ? row.startDate : now;
        return store.updateExperiment(tx, id, { status: to, startDate, updatedAt: clock.now() });
      }),

    pause: (actor: Actor, id: string) =>
      move(actor, id, 'pause', (tx, _row, to) => store.updateExperiment(tx, id, { status: to, updatedAt: clock.now() })),

    /** For results (SRM auto-pause): pauses as the system, audited as any pause; false when no longer active. */
    async pauseAutomatically(id: string): Promise<boolean> {
      let paused = false;
      await moveIfStillDue(id, 'pause', (row) => row.status === 'active', (tx, _row, to) => {
        paused = true;
        return store.updateExperiment(tx, id, { status: to, updatedAt: clock.now() });
      });
      return paused;
    },

    /** Ends now; a start_date after now becomes one microsecond before the end (spec, Experiment status). */
    complete: (actor: Actor, id: string) =>
      move(actor, id, 'complete', (tx) => store.completeExperiment(tx, id, isoMicros(clock.now()), clock.now())),

    archive: (actor: Actor, id: string) =>
      move(actor, id, 'archive', (tx, _row, to) => store.updateExperiment(tx, id, { status: to, updatedAt: clock.now() })),

    /** Scheduler job: drafts whose start_date has come become active, start_date kept. */
    async startScheduled(now: Date): Promise<void> {
      const at = isoMicros(now);
      await eachDue(await store.dueIds(db, 'draft', 'startDate', at), (id) =>
        moveIfStillDue(
          id,
          'start',
          (row) => row.status === 'draft' && row.startDate !== null && row.startDate <= at,
          (tx, _row, to) => store.updateExperiment(tx, id, { status: to, updatedAt: clock.now() }),
        ),
      );
    },

    /** Scheduler job: active experiments whose end_date passed are completed at that end_date. */
    async completeEnded(now: Date): Promise<void> {
      const at = isoMicros(now);
      await eachDue(await store.dueIds(db, 'active', 'endDate', at), (id) =>
        moveIfStillDue(
          id,
          'complete',
          (row) => row.status === 'active' && row.endDate !== null && row.endDate <= at,
          (tx, row) => store.completeExperiment(tx, id, row.endDate!, clock.now()),
        ),
      );
    },
  };
}
