/**
 * Regular expressions for the `regex` / `not_regex` operators, evaluated with re2js
 * (RE2 syntax, linear-time matching: no backtracking, no look-around, no back-references).
 *
 * - Patterns longer than MAX_REGEX_PATTERN_LENGTH UTF-16 units are invalid.
 * - Compiled patterns (and invalid ones) are cached by pattern text in a bounded LRU.
 * - Matching is a search ("find anywhere"); anchor with `^...$` for a full match.
 *   Flags are written inline, e.g. `(?i)` for case-insensitive.
 */
import { RE2JS } from 're2js';

export const MAX_REGEX_PATTERN_LENGTH = 500;
/**
 * Sized for bulk evaluation: 50 segments of many regex conditions each stay compiled across the users of one
 * request. Bounded both by count and by total pattern text, since a compiled program grows with its pattern.
 */
export const REGEX_CACHE_SIZE = 4_096;
const REGEX_CACHE_MAX_PATTERN_CHARS = 512 * 1024;

/**
 * A least-recently-used cache on a Map (insertion order is recency: a hit moves its entry to the end, eviction
 * takes from the front). Written here rather than taken from a package: this module is bundled into the SDK, which
 * has no runtime dependencies and runs in browsers. `null` caches "invalid pattern".
 */
const cache = new Map<string, RE2JS | null>();
let cachedChars = 0;

function remember(pattern: string, compiled: RE2JS | null): void {
  cache.set(pattern, compiled);
  cachedChars += pattern.length + 1;
  while (cache.size > REGEX_CACHE_SIZE || cachedChars > REGEX_CACHE_MAX_PATTERN_CHARS) {
    const oldest = cache.keys().next().value as string;
    cache.delete(oldest);
    cachedChars -= oldest.length + 1;
  }
}

export function compileRegex(pattern: unknown): RE2JS | null {
  if (typeof pattern !== 'string' || pattern.length > MAX_REGEX_PATTERN_LENGTH) return null;
  const hit = cache.get(pattern);
  if (hit !== undefined) {
    cache.delete(pattern);
    cache.set(pattern, hit);
    return hit;
  }
  let compiled: RE2JS | null;
  try {
    compiled = RE2JS.compile(pattern);
  } catch {
    compiled = null;
  }
  remember(pattern, compiled);
  return compiled;
}

export function isValidRegex(pattern: unknown): boolean {
  return compileRegex(pattern) !== null;
}

/** true/false when the pattern is valid, null when it is not. Never throws. */
export function regexTest(pattern: unknown, input: string): boolean | null {
  const re = compileRegex(pattern);
  if (re === null) return null;
  try {
    return re.test(input);
  } catch {
    return null;
  }
}

/** For tests: current number of cached patterns. */
export function regexCacheSize(): number {
  return cache.size;
}
