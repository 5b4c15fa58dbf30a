/**
 * Deterministic bucketing (spec for SDKs in other languages; see also README.md):
 *
 *   key    = salt + ":" + unitId                      (JavaScript strings, joined)
 *   bytes  = UTF-8 encoding of key                    (lone surrogates encode as U+FFFD, like TextEncoder)
 *   h      = MurmurHash3_x86_32(bytes, seed = 0)      (unsigned 32-bit)
 *   bucket = floor(h * 10000 / 2^32)                  (integer in [0, 10000), no modulo bias)
 *
 * Identified as BUCKETING = { name: 'murmur3_32', version: 1 }. Any change to this mapping is a
 * new version, never a silent change; golden vectors live in test/vectors/bucketing.json.
 *
 * Salts keep decisions independent: `flag:<key>` (flag rollout), `exp:<key>` (experiment
 * variant), `holdout:<id>` (holdout), `mex:<groupId>` (mutual exclusion).
 */

export const BUCKETING = { name: 'murmur3_32', version: 1 } as const;
/** Buckets per unit interval: bucket ∈ [0, BUCKET_COUNT); 1 bucket = 0.01 %. */
export const BUCKET_COUNT = 10000;

const encoder = new TextEncoder();

/** MurmurHash3 x86 32-bit of `bytes` with `seed`, as an unsigned 32-bit integer. */
export function murmur3_32(bytes: Uint8Array, seed = 0): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const len = bytes.length;
  const blocks = len & ~3;
  let h = seed >>> 0;
  for (let i = 0; i < blocks; i += 4) {
    let k = bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = len & 3;
  if (tail > 0) {
    let k = 0;
    if (tail === 3) k ^= bytes[blocks + 2] << 16;
    if (tail >= 2) k ^= bytes[blocks + 1] << 8;
    k ^= bytes[blocks];
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
  }
  h ^= len;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** MurmurHash3 x86 32-bit of the UTF-8 bytes of a string. */
export function murmur3_32_string(text: string, seed = 0): number {
  return murmur3_32(encoder.encode(text), seed);
}

/** THE bucketing function: (salt, unitId) → integer bucket in [0, 10000). */
export function bucketFor(salt: string, unitId: string): number {
  const h = murmur3_32(encoder.encode(`${salt}:${unitId}`), 0);
  return Math.floor((h * BUCKET_COUNT) / 0x1_0000_0000);
}

/** Percentage (0..100, steps of 0.01) → number of buckets, clamped; non-finite → 0. */
export function percentageToBuckets(percentage: number): number {
  if (typeof percentage !== 'number' || !Number.isFinite(percentage)) return 0;
  return Math.min(BUCKET_COUNT, Math.max(0, Math.round(percentage * 100)));
}

/** Is the unit inside the first `percentage` % of buckets? (0 → never, 100 → always.) */
export function inRollout(salt: string, unitId: string, percentage: number): boolean {
  return bucketFor(salt, unitId) < percentageToBuckets(percentage);
}

/**
 * Picks an index by cumulative allocation. `weights` are percentages (0.01 steps) meant to
 * sum to 100: each becomes round(w * 100) buckets, laid out in order from bucket 0; the unit
 * gets the index whose range holds its bucket. Returns -1 when the bucket lies beyond the
 * allocated total (weights summing to less than 100) or the weights are unusable
 * (empty, negative or non-finite).
 */
export function pickWeighted(salt: string, unitId: string, weights: readonly number[]): number {
  if (!Array.isArray(weights) || weights.length === 0) return -1;
  if (weights.some((w) => typeof w !== 'number' || !Number.isFinite(w) || w < 0)) return -1;
  const bucket = bucketFor(salt, unitId);
  let upper = 0;
  for (let i = 0; i < weights.length; i++) {
    upper += Math.round(weights[i] * 100);
    if (bucket < upper) return i;
  }
  return -1;
}

export const flagSalt = (flagKey: string): string => `flag:${flagKey}`;
export const experimentSalt = (experimentKey: string): string => `exp:${experimentKey}`;
export const holdoutSalt = (holdoutId: string): string => `holdout:${holdoutId}`;
export const mutexSalt = (groupId: string): string => `mex:${groupId}`;
