/** The rollout schedules module's refusals (the service re-exports them). */
import { MAX_STAGES } from './schemas.js';

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
