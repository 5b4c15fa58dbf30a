/** @uplift/sdk: flags evaluated locally with the service's own evaluator, live updates, assignment, tracking. */
export { Uplift, type UpliftOptions } from './client.js';
export { UpliftError, type FetchLike } from './http.js';
export { RulesetError } from './ruleset.js';
export type {
  Assignment,
  Attributes,
  FlagEvaluation,
  FlagReason,
  Ruleset,
  RulesetFlag,
  RulesetSegment,
  TrackOptions,
  UpliftEvent,
  ValueDetails,
  VariationReason,
} from './types.js';
