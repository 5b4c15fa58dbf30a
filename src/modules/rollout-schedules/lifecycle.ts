import type { RolloutScheduleStatus } from '../../db/schema/rollout-schedules.js';

export type ScheduleAction = 'activate' | 'pause' | 'cancel';

/**
 * The schedule state machine. A missing entry is refused (409). `completed` is reached only by the scheduler or
 * an advance applying the last pending stage of an active schedule; `completed` and `cancelled` are final.
 * Repeating the state a schedule is already in (activating an active one) changes nothing.
 */
export const TRANSITIONS: Record<ScheduleAction, Partial<Record<RolloutScheduleStatus, RolloutScheduleStatus>>> = {
  activate: { draft: 'active', paused: 'active', active: 'active' },
  pause: { active: 'paused', paused: 'paused' },
  cancel: { draft: 'cancelled', active: 'cancelled', paused: 'cancelled', cancelled: 'cancelled' },
};

const PARTICIPLES: Record<ScheduleAction, string> = { activate: 'activated', pause: 'paused', cancel: 'cancelled' };

export function transitionRefused(status: RolloutScheduleStatus, action: ScheduleAction): string {
  return `A ${status} schedule cannot be ${PARTICIPLES[action]}.`;
}

/** Only these states accept edits to the schedule or its stages. */
export const isOpen = (status: RolloutScheduleStatus): boolean => status !== 'completed' && status !== 'cancelled';

/**
 * Timed stages must run in time order: the index of the first stage scheduled before an earlier timed stage, or -1.
 * Manual stages (null) do not take part: they wait for an advance whatever the time.
 */
export function firstOutOfOrder(times: ReadonlyArray<Date | null>): number {
  let latest = -Infinity;
  for (const [i, time] of times.entries()) {
    if (time === null) continue;
    if (time.getTime() < latest) return i;
    latest = time.getTime();
  }
  return -1;
}
