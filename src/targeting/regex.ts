/**
 * Regular expressions for the `regex` / `not_regex` operators, evaluated with re2js
 * (RE2 syntax, linear-time matching: no backtracking, no look-around, no back-references).
 *
 * - Patterns longer than MAX_REGEX_PATTERN_LENGTH UTF-16 units are invalid, and so are patterns whose compiled
 *   program has more than MAX_REGEX_PROGRAM_SIZE instructions (`regexProblem` tells the latter apart, for messages).
 * - Compiled patterns (and invalid ones) are cached by pattern text in a bounded LRU.
 * - Matching is a search ("find anywhere"); anchor with `^...$` for a full match.
 *   Flags are written inline, e.g. `(?i)` for case-insensitive.
 * - A search costs program size × (characters + 1) work units; one costing more than MAX_REGEX_TEST_COST is not run
 *   and the condition is unevaluable, as for an invalid pattern (`regexSearch`).
 *
 * Why these caps (issue #27): RE2 is linear in the input, but the factor is the program. re2js's lazy DFA builds a
 * state per character on a pattern whose states never repeat, at 0.2 µs or more per instruction (bench/regex.ts), so
 * `(?i)(?:(\w+)\s?){1,999}#` (7,000 instructions) took 2.5 s on an 8 KB attribute. Program size bounds the cost per
 * character, the test cost bounds one search, and MAX_REGEX_CONDITIONS (validate.ts) the searches of one evaluation.
 */
import { RE2JS } from 're2js';

export const MAX_REGEX_PATTERN_LENGTH = 500;
/** Instructions of the compiled program (re2js `programSize()`), about one per literal character or class. */
export const MAX_REGEX_PROGRAM_SIZE = 100;
/**
 * Work units one search may cost: program size × (UTF-16 length of the text + 1). A pattern of 100 instructions reads
 * up to 79 characters, one of 20 up to 399, one of 10 up to 799.
 */
export const MAX_REGEX_TEST_COST = 8_000;
/**
 * Patterns whose estimated expansion (estimatedProgramSize) is above this are refused without compiling: compiling
 * is linear in the expanded program, and `x{1000}` makes a 6-character pattern expand to 1,000 instructions.
 */
const MAX_ESTIMATED_PROGRAM_SIZE = 2 * MAX_REGEX_PROGRAM_SIZE;
/**
 * Sized for bulk evaluation: 50 segments of many regex conditions each stay compiled across the users of one
 * request. Bounded both by count and by total pattern text, since a compiled program grows with its pattern.
 */
export const REGEX_CACHE_SIZE = 4_096;
const REGEX_CACHE_MAX_PATTERN_CHARS = 512 * 1024;

export type RegexProblem = 'invalid' | 'too_large';

/**
 * A least-recently-used cache on a Map (insertion order is recency: a hit moves its entry to the end, eviction
 * takes from the front). Written here rather than taken from a package: this module is bundled into the SDK, which
 * has no runtime dependencies and runs in browsers. A problem is cached as such.
 */
const cache = new Map<string, RE2JS | RegexProblem>();
let cachedChars = 0;

function remember(pattern: string, compiled: RE2JS | RegexProblem): void {
  cache.set(pattern, compiled);
  cachedChars += pattern.length + 1;
  while (cache.size > REGEX_CACHE_SIZE || cachedChars > REGEX_CACHE_MAX_PATTERN_CHARS) {
    const oldest = cache.keys().next().value as string;
    cache.delete(oldest);
    cachedChars -= oldest.length + 1;
  }
}

const REPEAT = /^\{(\d+)(,(\d*))?\}/;
const SATURATED = 1e9;

/**
 * An estimate, from the text, of the instructions RE2 compiles a pattern to, counting each counted repetition
 * `x{n,m}` as max(n, m) copies of x (RE2 expands it so): literals, escapes, classes and `.` count 1, `*` `+` `?` and
 * each `|` 1, a capturing group its contents plus 2 (a non-capturing one, its contents), and a group of single
 * characters or classes in alternation (`(?:a|b)`) 1, as RE2 merges them into one class. Close to `programSize()` and
 * usually above it; only used to refuse patterns that would be costly to compile, the compiled program size decides
 * the rest.
 */
export function estimatedProgramSize(pattern: string): number {
  const totals: number[] = [0];
  const lasts: number[] = [0];
  // Per open group: whether it captures; atoms in its current alternative; whether every alternative so far is one
  // atom of size 1 with no quantifier (then the group is one class).
  const captures: boolean[] = [false];
  const atoms: number[] = [0];
  const single: boolean[] = [true];
  const add = (size: number) => {
    const top = totals.length - 1;
    totals[top] = Math.min(SATURATED, totals[top] + size);
    lasts[top] = size;
    atoms[top] += 1;
    if (size !== 1) single[top] = false;
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const stop = end < 0 ? pattern.length : end;
        for (let j = i + 2; j < stop; j++) add(1);
        i = end < 0 ? stop : end + 2;
        continue;
      }
      i += 2;
      if ((next === 'p' || next === 'P' || next === 'x') && pattern[i] === '{') {
        const close = pattern.indexOf('}', i);
        i = close < 0 ? pattern.length : close + 1;
      }
      add(1);
    } else if (c === '[') {
      i = classEnd(pattern, i);
      add(1);
    } else if (c === '(') {
      i += 1;
      let capturing = true;
      if (pattern[i] === '?') {
        const close = pattern.slice(i).search(/[:)>]/);
        const end = close < 0 ? pattern.length : i + close;
        if (pattern[end] === ')') {
          // (?i) and the like set flags: no group, no instruction.
          i = end + 1;
          continue;
        }
        // (?:...) and (?i:...) capture nothing; (?P<name>...) and (?<name>...) do.
        capturing = pattern[end] === '>';
        i = end + 1;
      }
      totals.push(0);
      lasts.push(0);
      captures.push(capturing);
      atoms.push(0);
      single.push(true);
    } else if (c === ')') {
      i += 1;
      if (totals.length > 1) {
        const contents = totals.pop()!;
        lasts.pop();
        const oneClass = single.pop()! && atoms.pop() === 1;
        add((oneClass ? 1 : contents) + (captures.pop() ? 2 : 0));
        single[single.length - 1] = false;
      }
    } else if (c === '|') {
      i += 1;
      const top = totals.length - 1;
      if (atoms[top] !== 1) single[top] = false;
      add(1);
      atoms[top] = 0;
      lasts[top] = 0;
    } else if (c === '*' || c === '+' || c === '?') {
      i += 1;
      if (pattern[i] === '?') i += 1;
      const top = totals.length - 1;
      totals[top] = Math.min(SATURATED, totals[top] + 1);
      lasts[top] += 1;
      single[top] = false;
    } else if (c === '{' && REPEAT.test(pattern.slice(i, i + 24))) {
      const m = REPEAT.exec(pattern.slice(i, i + 24))!;
      i += m[0].length;
      if (pattern[i] === '?') i += 1;
      const n = Number(m[1]);
      const copies = Math.max(1, n, m[3] ? Number(m[3]) : m[2] ? n + 1 : n);
      const top = totals.length - 1;
      const last = lasts[top];
      const expanded = Math.min(SATURATED, last * copies + copies);
      totals[top] = Math.min(SATURATED, totals[top] - last + expanded);
      lasts[top] = expanded;
      single[top] = false;
    } else {
      i += 1;
      add(1);
    }
  }
  let total = 0;
  for (const t of totals) total = Math.min(SATURATED, total + t);
  return total;
}

/** Index just past the class opening at `start` (`[^]a]`, `[[:alpha:]]` and escapes included). */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i += 1;
  if (pattern[i] === ']') i += 1;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === '\\') {
      i += 2;
      if (pattern[i] === '{') {
        const close = pattern.indexOf('}', i);
        i = close < 0 ? pattern.length : close + 1;
      }
    } else if (c === '[' && pattern[i + 1] === ':') {
      const close = pattern.indexOf(':]', i + 2);
      i = close < 0 ? i + 1 : close + 2;
    } else if (c === ']') {
      return i + 1;
    } else {
      i += 1;
    }
  }
  return i;
}

function compileChecked(pattern: string): RE2JS | RegexProblem {
  if (estimatedProgramSize(pattern) > MAX_ESTIMATED_PROGRAM_SIZE) return 'too_large';
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch {
    return 'invalid';
  }
  return compiled.programSize() > MAX_REGEX_PROGRAM_SIZE ? 'too_large' : compiled;
}

function lookup(pattern: unknown): RE2JS | RegexProblem {
  if (typeof pattern !== 'string' || pattern.length > MAX_REGEX_PATTERN_LENGTH) return 'invalid';
  const hit = cache.get(pattern);
  if (hit !== undefined) {
    cache.delete(pattern);
    cache.set(pattern, hit);
    return hit;
  }
  const compiled = compileChecked(pattern);
  remember(pattern, compiled);
  return compiled;
}

export function compileRegex(pattern: unknown): RE2JS | null {
  const compiled = lookup(pattern);
  return typeof compiled === 'string' ? null : compiled;
}

/**
 * Why a pattern cannot be used: not a string, longer than MAX_REGEX_PATTERN_LENGTH or not RE2 syntax (`invalid`),
 * over MAX_REGEX_PROGRAM_SIZE (`too_large`); else null.
 */
export function regexProblem(pattern: unknown): RegexProblem | null {
  const compiled = lookup(pattern);
  return typeof compiled === 'string' ? compiled : null;
}

export function isValidRegex(pattern: unknown): boolean {
  return compileRegex(pattern) !== null;
}

/** Work units of every search run so far (program size × (characters + 1)): for tests and bench/regex.ts. */
let workDone = 0;

/**
 * Searches `input` with a compiled pattern: true/false, or null when the search would cost more than
 * MAX_REGEX_TEST_COST (not run) or the matcher fails. Never throws.
 */
export function regexSearch(re: RE2JS, input: string): boolean | null {
  const cost = re.programSize() * (input.length + 1);
  if (cost > MAX_REGEX_TEST_COST) return null;
  workDone += cost;
  try {
    return re.test(input);
  } catch {
    return null;
  }
}

/** true/false when the pattern is valid and the search affordable, null otherwise. Never throws. */
export function regexTest(pattern: unknown, input: string): boolean | null {
  const re = compileRegex(pattern);
  return re === null ? null : regexSearch(re, input);
}

/** For tests and the benchmark: the work units of every search run so far in this process. */
export function regexWorkDone(): number {
  return workDone;
}

/** For tests: current number of cached patterns. */
export function regexCacheSize(): number {
  return cache.size;
}
