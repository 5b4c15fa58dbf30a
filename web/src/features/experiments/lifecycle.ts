import type { ExperimentStatus, Transition } from './hooks';

/**
 * Which lifecycle buttons a status offers: the server's transition table (src/modules/experiments/lifecycle.ts),
 * so the detail page never shows a move the API would refuse with 409. Start from `paused` is labelled Resume.
 */
const FROM: Record<Transition, readonly ExperimentStatus[]> = {
  start: ['draft', 'paused'],
  pause: ['active'],
  complete: ['active', 'paused'],
  archive: ['draft', 'paused', 'completed'],
};

export function allowedTransitions(status: ExperimentStatus): Transition[] {
  return (Object.keys(FROM) as Transition[]).filter((move) => FROM[move].includes(status));
}

export function transitionLabel(move: Transition, status: ExperimentStatus): string {
  if (move === 'start') return status === 'paused' ? 'Resume' : 'Start';
  return move.charAt(0).toUpperCase() + move.slice(1);
}

export const STATUS_TONE: Record<ExperimentStatus, string> = {
  draft: 'neutral',
  active: 'success',
  paused: 'warning',
  completed: 'info',
  archived: 'muted',
};
