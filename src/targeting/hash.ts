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

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** One 32-bit block of input, as MurmurHash3 scrambles it before mixing into the state. */
function scramble(k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, C2);
}

function mixBlock(h: number, k: number): number {
  h ^= scramble(k);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** Tail (`pending` holds the last `len & 3` bytes, little-endian), length and avalanche. */
function finish(h: number, pending: number, len: number): number {
  if ((len & 3) !== 0) h ^= scramble(pending);
  h ^= len;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** MurmurHash3 x86 32-bit of `bytes` with `seed`, as an unsigned 32-bit integer. */
export function murmur3_32(bytes: Uint8Array, seed = 0): number {
  const len = bytes.length;
  const blocks = len & ~3;
  let h = seed >>> 0;
  for (let i = 0; i < blocks; i += 4) {
    h = mixBlock(h, bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24));
  }
  let pending = 0;
  for (let i = len - 1; i >= blocks; i--) pending = (pending << 8) | bytes[i];
  return finish(h, pending, len);
}

/**
 * MurmurHash3 x86 32-bit with `seed` of the UTF-8 bytes of `first`, or of `first + ":" + second` when `second` is
 * given, encoding inside the hash loop: no string is joined and no byte buffer allocated. Encodes exactly like
 * TextEncoder: a surrogate pair as one 4-byte code point, a lone surrogate as U+FFFD.
 */
function murmur3Utf8(seed: number, first: string, second: string | undefined): number {
  let h = seed;
  let pending = 0;
  let len = 0;
  const parts = second === undefined ? 1 : 3;
  for (let part = 0; part < parts; part++) {
    const s = part === 0 ? first : part === 1 ? ':' : (second as string);
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) {
        pending |= c << ((len & 3) << 3);
        if ((++len & 3) === 0) {
          h = mixBlock(h, pending);
          pending = 0;
        }
        continue;
      }
      let count: number;
      if (c < 0x800) count = 2;
      else if (c < 0xd800 || c > 0xdfff) count = 3;
      else {
        const d = c <= 0xdbff && i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          count = 4;
          i++;
        } else {
          c = 0xfffd;
          count = 3;
        }
      }
      for (let j = count - 1; j >= 0; j--) {
        const bits = c >>> (6 * j);
        const byte = j === count - 1 ? (count === 2 ? 0xc0 : count === 3 ? 0xe0 : 0xf0) | bits : 0x80 | (bits & 0x3f);
        pending |= byte << ((len & 3) << 3);
        if ((++len & 3) === 0) {
          h = mixBlock(h, pending);
          pending = 0;
        }
      }
    }
  }
  return finish(h, pending, len);
}

/** MurmurHash3 x86 32-bit of the UTF-8 bytes of a string. */
export function murmur3_32_string(text: string, seed = 0): number {
  return murmur3Utf8(seed >>> 0, String(text), undefined);
}

const toBucket = (h: number): number => Math.floor((h * BUCKET_COUNT) / 0x1_0000_0000);

/** THE bucketing function: (salt, unitId) → integer bucket in [0, 10000). */
export function bucketFor(salt: string, unitId: string): number {
  return toBucket(murmur3Utf8(0, String(salt), String(unitId)));
}

/**
 * A unit id prepared once for bucketing under many salts (one user, every flag of a ruleset): its UTF-8 bytes
 * (encoded on first use, exactly as TextEncoder), packed into the little-endian 32-bit words MurmurHash3 reads,
 * for each of the four offsets at which a salt prefix leaves them (prefix length mod 4), each packed on first use.
 */
export class BucketUnit {
  private bytes: Uint8Array | undefined;
  private readonly packed: Array<Int32Array | undefined> = [undefined, undefined, undefined, undefined];

  constructor(readonly id: string) {}

  get length(): number {
    return (this.bytes ??= utf8(this.id)).length;
  }

  /** Word k holds the bytes at stream positions [4k, 4k+4) when the unit starts at position `offset` (0..3). */
  words(offset: number): Int32Array {
    let w = this.packed[offset];
    if (w === undefined) {
      const bytes = (this.bytes ??= utf8(this.id));
      w = new Int32Array(((offset + bytes.length) >> 2) + 1);
      for (let j = 0; j < bytes.length; j++) {
        const pos = offset + j;
        w[pos >> 2] |= bytes[j] << ((pos & 3) << 3);
      }
      this.packed[offset] = w;
    }
    return w;
  }
}

const encoder = new TextEncoder();

/** UTF-8 bytes as TextEncoder encodes them, without the native call for the usual all-ASCII id. */
function utf8(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return encoder.encode(text);
    bytes[i] = c;
  }
  return bytes;
}

/** `unit => bucketFor(salt, unit.id)` for one salt. */
export type Bucketer = (unit: BucketUnit) => number;

/**
 * `unit => bucketFor(salt, unit.id)` with the hash state of `salt + ":"` computed once (a flag's salt is fixed, its
 * users are not), reading the unit's prepared words. The prefix ends with ":", so no surrogate pair spans it and the
 * unit id: the bytes are those of the joined string.
 */
export function bucketerFor(salt: string): Bucketer {
  const prefix = encoder.encode(`${salt}:`);
  const blocks = prefix.length & ~3;
  let h0 = 0;
  for (let i = 0; i < blocks; i += 4) h0 = mixBlock(h0, prefix[i] | (prefix[i + 1] << 8) | (prefix[i + 2] << 16) | (prefix[i + 3] << 24));
  let pending0 = 0;
  for (let i = prefix.length - 1; i >= blocks; i--) pending0 = (pending0 << 8) | prefix[i];
  const offset = prefix.length & 3;
  return (unit) => {
    const w = unit.words(offset);
    const length = unit.length;
    const full = (offset + length) >> 2;
    let h = h0;
    let word = pending0 | w[0];
    for (let k = 0; k < full; k++) {
      h = mixBlock(h, word);
      word = w[k + 1];
    }
    return toBucket(finish(h, word, prefix.length + length));
  };
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
