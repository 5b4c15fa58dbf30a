/**
 * Regular expressions for the `regex` / `not_regex` operators, evaluated with re2js
 * (RE2 syntax, linear-time matching: no backtracking, no look-around, no back-references).
 *
 * - Patterns longer than MAX_REGEX_PATTERN_LENGTH UTF-16 units are invalid.
 * - Compiled patterns (and invalid ones) are cached by pattern text in a bounded LRU.
 * - Matching is a search ("find anywhere"); anchor with `^...$` for a full match.
 *   Flags are written inline, e.g. `(?i)` for case-insensitive.
 */
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';

export const MAX_REGEX_PATTERN_LENGTH = 500;
/**
 * Sized for bulk evaluation: 50 segments of many regex conditions each stay compiled across the users of one
 * request. Bounded both by count and by total pattern text, since a compiled program grows with its pattern.
 */
export const REGEX_CACHE_SIZE = 4_096;
const REGEX_CACHE_MAX_PATTERN_CHARS = 512 * 1024;

/** `false` caches "invalid pattern" (the LRU cannot hold null). */
const cache = new LRUCache<string, RE2JS | false>({
  max: REGEX_CACHE_SIZE,
  maxSize: REGEX_CACHE_MAX_PATTERN_CHARS,
  sizeCalculation: (_value, pattern) => pattern.length + 1,
});

export function compileRegex(pattern: unknown): RE2JS | null {
  if (typeof pattern !== 'string' || pattern.length > MAX_REGEX_PATTERN_LENGTH) return null;
  const hit = cache.get(pattern);
  if (hit !== undefined) return hit || null;
  let compiled: RE2JS | false;
  try {
    compiled = RE2JS.compile(pattern);
  } catch {
    compiled = false;
  }
  cache.set(pattern, compiled);
  return compiled || null;
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
