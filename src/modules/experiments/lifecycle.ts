/**
 * The experiment state machine: every status change (routes and scheduler) goes through `transition`, so the
 * table below is the whole truth about which moves exist.
 */
import type { ExperimentStatus } from '../../db/schema/experiments.js';
import { Conflict } from '../../platform/errors.js';

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
