import { BUCKET_COUNT, bucketFor } from '../../targeting/index.js';

/**
 * The preview's bucketing (spec: "hashes {user_id}:{experiment_id}"). `bucketFor(salt, unit)` hashes
 * `${salt}:${unit}` with murmur3 (BUCKETING v1), so salt = user_id and unit = experiment_id hash exactly that string.
 * It predicts no router: nothing splits split-URL traffic in this release.
 */
export function previewBucket(userId: string, experimentId: string): number {
  return bucketFor(userId, experimentId);
}

/**
 * The variant whose share of the buckets holds the user's bucket. Allocations are scaled to their own total
 * (which may be 100 ± 0.01), so every bucket lands on a variant; a 0 % variant is never picked.
 */
export function pickByAllocation<T extends { traffic_allocation: number }>(variants: readonly T[], bucket: number): T {
  const total = variants.reduce((sum, v) => sum + v.traffic_allocation, 0);
  let upper = 0;
  for (const variant of variants) {
    upper += (variant.traffic_allocation / total) * BUCKET_COUNT;
    if (bucket < upper) return variant;
  }
  // Rounding can leave the last bucket just past the sum; it belongs to the last variant with any share.
  return [...variants].reverse().find((v) => v.traffic_allocation > 0) ?? variants[variants.length - 1];
}
