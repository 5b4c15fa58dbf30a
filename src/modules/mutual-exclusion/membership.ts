/**
 * Which experiment of a mutual exclusion group a user may enter. Pure (no I/O): tracking calls it per assignment.
 * Bucketing on `mex:<groupId>` is independent of every experiment's own variant split (`exp:<key>`).
 */
import { BUCKET_COUNT, bucketFor, mutexSalt, pickWeighted } from '../../targeting/index.js';

/** An active group as assignment reads it: members in the order they joined. */
export interface ExclusionGroup {
  id: string;
  experimentIds: string[];
  /** Percentage of the group's users per member; members left out get none. Null splits users evenly. */
  trafficAllocation: Record<string, number> | null;
}

/**
 * The one member the user may enter, or null when the user falls in no member's share (allocations under 100).
 * Deterministic in (group id, user id).
 */
export function mutexSlot(group: ExclusionGroup, userId: string): string | null {
  const ids = group.experimentIds;
  if (ids.length === 0) return null;
  const salt = mutexSalt(group.id);
  if (!group.trafficAllocation) return ids[Math.floor((bucketFor(salt, userId) * ids.length) / BUCKET_COUNT)];
  const allocation = group.trafficAllocation;
  const index = pickWeighted(salt, userId, ids.map((id) => allocation[id] ?? 0));
  return index < 0 ? null : ids[index];
}
