/**
 * Global holdout membership. Pure (no I/O): tracking calls it for every new assignment. Bucketing on
 * `holdout:<id>` keeps a user in or out for the holdout's whole life; raising the percentage only adds users.
 */
import { holdoutSalt, inRollout } from '../../targeting/index.js';

export function isInHoldout(holdout: { id: string; percentage: number }, userId: string): boolean {
  return inRollout(holdoutSalt(holdout.id), userId, holdout.percentage);
}
