/** The mutual exclusion module's vocabulary and pure rules, as other modules (tracking, experiments) use them. */
export { mutexSlot, type ExclusionGroup } from './membership.js';

/** Bus channel: a mutual exclusion group changed (its id); tracking's experiment map listens. */
export const MUTUAL_EXCLUSION_CHANGED = 'mutual-exclusion.changed';
