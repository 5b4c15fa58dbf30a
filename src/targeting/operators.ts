/**
 * Condition operators (everything except the segment operators, handled in evaluate.ts).
 *
 * `actual` is the context value (undefined when the attribute is missing), `expected` the rule
 * value. Rules (see README.md for the table):
 *  - `null` and `undefined` are "missing". On a missing attribute every operator is false
 *    except `is_null` (true). That includes the negative operators: `not_equals`, `not_in`,
 *    `not_contains`, `not_regex` are false on a missing attribute.
 *  - A malformed rule value (wrong type, invalid regex / version / date) makes the condition
 *    false, for the positive and the negative operator alike; so does a regex search costing more
 *    than MAX_REGEX_TEST_COST (regex.ts), which is not run.
 *  - Otherwise each negative operator is exactly the negation of its positive twin
 *    (a context value of an unusable type fails `contains` and so passes `not_contains`).
 *  - Never throws.
 */
import { compileRegex, regexSearch } from './regex.js';
import { compareSemver, parseSemver } from './semver.js';

export type Scalar = string | number | boolean;

export function isPresent(v: unknown): boolean {
  return v !== undefined && v !== null;
}

export function isScalar(v: unknown): v is Scalar {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

const NUMBER_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A finite number, or a string in plain decimal/exponent notation (no spaces, no hex); else null. */
export function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.length <= 64 && NUMBER_RE.test(v)) {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/**
 * Equality used by equals / in / contains-on-arrays: same-type strict equality
 * (strings case-sensitive), plus number ↔ numeric string (`18` equals `"18"`, `"18.0"`)
 * and boolean ↔ `"true"` / `"false"`. Anything else (objects, arrays, NaN) is never equal.
 */
export function scalarEquals(a: unknown, b: unknown): boolean {
  if (!isScalar(a) || !isScalar(b)) return false;
  if (typeof a === typeof b) return a === b;
  if (typeof a === 'number' && typeof b === 'string') return toNumber(b) === a;
  if (typeof a === 'string' && typeof b === 'number') return toNumber(a) === b;
  if (typeof a === 'boolean' && typeof b === 'string') return b === String(a);
  if (typeof a === 'string' && typeof b === 'boolean') return a === String(b);
  return false;
}

/** String view of a context value for text operators: strings, finite numbers; else null. */
function asText(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
}

/** Text of a rule value for contains / starts_with / ends_with: string or finite number. */
function needleOf(v: unknown): string | null {
  return asText(v);
}

// ---- dates ---------------------------------------------------------------------------------

const ISO_DATE_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;

/** Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/**
 * Milliseconds since the Unix epoch for an ISO 8601 date or date-time
 * (`YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fraction]][Z|±HH:MM|±HHMM]`), or a finite number
 * (already epoch milliseconds). A date or date-time without an offset is read as UTC.
 * Anything else (including out-of-range fields) → null.
 */
export function parseDate(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string' || v.length > 40) return null;
  const m = ISO_DATE_RE.exec(v);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const h = m[4] === undefined ? 0 : Number(m[4]);
  const mi = m[5] === undefined ? 0 : Number(m[5]);
  const s = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return null;
  let offsetMin = 0;
  const z = m[8];
  if (z !== undefined && z !== 'Z' && z !== 'z') {
    const digits = z.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2, 4));
    if (oh > 23 || om > 59) return null;
    offsetMin = (z[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  return daysFromCivil(y, mo, d) * 86_400_000 + h * 3_600_000 + mi * 60_000 + s * 1000 + ms - offsetMin * 60_000;
}

// ---- operators -----------------------------------------------------------------------------

function inList(actual: unknown, list: unknown[]): boolean {
  for (const e of list) if (scalarEquals(actual, e)) return true;
  return false;
}

function contains(actual: unknown, expected: unknown): boolean | null {
  if (Array.isArray(actual)) return isScalar(expected) ? inList(expected, actual) : null;
  const needle = needleOf(expected);
  if (needle === null) return null;
  const hay = asText(actual);
  return hay !== null && hay.includes(needle);
}

function textTest(actual: unknown, expected: unknown, test: (hay: string, needle: string) => boolean): boolean {
  const needle = needleOf(expected);
  const hay = asText(actual);
  return needle !== null && hay !== null && test(hay, needle);
}

function numeric(actual: unknown, expected: unknown, test: (a: number, b: number) => boolean): boolean {
  const a = toNumber(actual);
  const b = toNumber(expected);
  return a !== null && b !== null && test(a, b);
}

function semver(actual: unknown, expected: unknown, test: (c: number) => boolean): boolean {
  const a = parseSemver(actual);
  const b = parseSemver(expected);
  return a !== null && b !== null && test(compareSemver(a, b));
}

function dates(actual: unknown, expected: unknown, test: (a: number, b: number) => boolean): boolean {
  const a = parseDate(actual);
  const b = parseDate(expected);
  return a !== null && b !== null && test(a, b);
}

/** Regex result: null when the pattern is invalid (malformed rule) or the search too costly (unevaluable). */
function regex(actual: unknown, expected: unknown): boolean | null {
  const re = compileRegex(expected);
  if (re === null) return null;
  const hay = asText(actual);
  if (hay === null) return false;
  return regexSearch(re, hay);
}

/**
 * Applies a non-segment operator. Unknown operators and the segment operators → false.
 */
export function applyOperator(operator: unknown, actual: unknown, expected: unknown): boolean {
  if (operator === 'is_null') return !isPresent(actual);
  if (operator === 'is_not_null') return isPresent(actual);
  if (!isPresent(actual)) return false;
  switch (operator) {
    case 'equals':
      return isScalar(expected) && scalarEquals(actual, expected);
    case 'not_equals':
      return isScalar(expected) && !scalarEquals(actual, expected);
    case 'in':
      return Array.isArray(expected) && inList(actual, expected);
    case 'not_in':
      return Array.isArray(expected) && !inList(actual, expected);
    case 'contains':
      return contains(actual, expected) === true;
    case 'not_contains':
      return contains(actual, expected) === false;
    case 'starts_with':
      return textTest(actual, expected, (h, n) => h.startsWith(n));
    case 'ends_with':
      return textTest(actual, expected, (h, n) => h.endsWith(n));
    case 'regex':
      return regex(actual, expected) === true;
    case 'not_regex':
      return regex(actual, expected) === false;
    case 'gt':
      return numeric(actual, expected, (a, b) => a > b);
    case 'gte':
      return numeric(actual, expected, (a, b) => a >= b);
    case 'lt':
      return numeric(actual, expected, (a, b) => a < b);
    case 'lte':
      return numeric(actual, expected, (a, b) => a <= b);
    case 'semver_eq':
      return semver(actual, expected, (c) => c === 0);
    case 'semver_gt':
      return semver(actual, expected, (c) => c > 0);
    case 'semver_gte':
      return semver(actual, expected, (c) => c >= 0);
    case 'semver_lt':
      return semver(actual, expected, (c) => c < 0);
    case 'semver_lte':
      return semver(actual, expected, (c) => c <= 0);
    case 'before':
      return dates(actual, expected, (a, b) => a < b);
    case 'after':
      return dates(actual, expected, (a, b) => a > b);
    default:
      return false;
  }
}

/**
 * Whether `value` is a usable rule value for `operator` (used by validation). Unknown
 * operators → false.
 */
export function isValidOperatorValue(operator: unknown, value: unknown): boolean {
  switch (operator) {
    case 'equals':
    case 'not_equals':
      return isScalar(value);
    case 'in':
    case 'not_in':
      return Array.isArray(value) && value.every(isScalar);
    case 'contains':
    case 'not_contains':
    case 'starts_with':
    case 'ends_with':
      return needleOf(value) !== null;
    case 'regex':
    case 'not_regex':
      return compileRegex(value) !== null;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return toNumber(value) !== null;
    case 'semver_eq':
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte':
      return parseSemver(value) !== null;
    case 'before':
    case 'after':
      return parseDate(value) !== null;
    case 'is_null':
    case 'is_not_null':
      return true;
    case 'in_segment':
    case 'not_in_segment':
      return typeof value === 'string' && value.length > 0;
    default:
      return false;
  }
}
