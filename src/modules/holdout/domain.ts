/** The holdout module's pure rules, as tracking uses them for every new assignment. */
export { isInHoldout } from './membership.js';
