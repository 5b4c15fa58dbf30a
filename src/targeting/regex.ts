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
export const REGEX_CACHE_SIZE = 256;

/** LRU via Map insertion order. `null` caches "invalid pattern". */
const cache = new Map<string, RE2JS | null>();

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
  cache.set(pattern, compiled);
  if (cache.size > REGEX_CACHE_SIZE) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
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
