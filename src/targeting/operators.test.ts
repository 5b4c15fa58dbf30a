import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyOperator, isValidOperatorValue, parseDate, scalarEquals, toNumber } from './operators.js';
import { compileRegex, MAX_REGEX_PATTERN_LENGTH, regexCacheSize, REGEX_CACHE_SIZE, regexTest } from './regex.js';
import { compareSemver, parseSemver } from './semver.js';
import { OPERATORS } from './types.js';

const op = (operator: string, actual: unknown, expected?: unknown) => applyOperator(operator, actual, expected);

describe('missing attributes', () => {
  const NON_NULL_OPS = OPERATORS.filter((o) => o !== 'is_null' && o !== 'in_segment' && o !== 'not_in_segment');
  const sampleValue: Record<string, unknown> = {
    in: ['US'],
    not_in: ['US'],
    regex: '^U',
    not_regex: '^U',
    gt: 1,
    gte: 1,
    lt: 1,
    lte: 1,
    semver_eq: '1.0.0',
    semver_gt: '1.0.0',
    semver_gte: '1.0.0',
    semver_lt: '1.0.0',
    semver_lte: '1.0.0',
    before: '2024-01-01',
    after: '2024-01-01',
  };
  it.each(NON_NULL_OPS)('%s is false on a missing (undefined or null) attribute', (o) => {
    const v = sampleValue[o] ?? 'US';
    expect(op(o, undefined, v)).toBe(false);
    expect(op(o, null, v)).toBe(false);
  });
  it('is_null passes on missing and null, fails on values', () => {
    expect(op('is_null', undefined)).toBe(true);
    expect(op('is_null', null)).toBe(true);
    expect(op('is_null', '')).toBe(false);
    expect(op('is_null', 0)).toBe(false);
    expect(op('is_null', false)).toBe(false);
  });
  it('is_not_null is the opposite', () => {
    expect(op('is_not_null', undefined)).toBe(false);
    expect(op('is_not_null', null)).toBe(false);
    expect(op('is_not_null', '')).toBe(true);
    expect(op('is_not_null', {})).toBe(true);
  });
});

describe('equals / not_equals', () => {
  it('compares strings case-sensitively', () => {
    expect(op('equals', 'US', 'US')).toBe(true);
    expect(op('equals', 'us', 'US')).toBe(false);
    expect(op('not_equals', 'us', 'US')).toBe(true);
    expect(op('not_equals', 'US', 'US')).toBe(false);
  });
  it('coerces numbers and numeric strings, booleans and "true"/"false"', () => {
    expect(op('equals', 18, '18')).toBe(true);
    expect(op('equals', '18.0', 18)).toBe(true);
    expect(op('equals', 18, 18)).toBe(true);
    expect(op('equals', 18, '18abc')).toBe(false);
    expect(op('equals', true, 'true')).toBe(true);
    expect(op('equals', 'false', false)).toBe(true);
    expect(op('equals', true, 1)).toBe(false);
  });
  it('bad rule value types are false for both', () => {
    for (const bad of [['US'], { a: 1 }, null, undefined, Number.NaN]) {
      expect(op('equals', 'US', bad)).toBe(false);
      expect(op('not_equals', 'US', bad)).toBe(false);
    }
  });
  it('objects in the context never equal; not_equals holds', () => {
    expect(op('equals', { a: 1 }, 'x')).toBe(false);
    expect(op('not_equals', { a: 1 }, 'x')).toBe(true);
  });
});

describe('in / not_in', () => {
  it('membership with scalar coercion', () => {
    expect(op('in', 'US', ['US', 'CA'])).toBe(true);
    expect(op('in', 'FR', ['US', 'CA'])).toBe(false);
    expect(op('in', 3, ['1', '2', '3'])).toBe(true);
    expect(op('not_in', 'FR', ['US', 'CA'])).toBe(true);
    expect(op('not_in', 'US', ['US'])).toBe(false);
    expect(op('in', 'US', [])).toBe(false);
    expect(op('not_in', 'US', [])).toBe(true);
  });
  it('a non-list rule value is false for both', () => {
    expect(op('in', 'US', 'US')).toBe(false);
    expect(op('not_in', 'US', 'US')).toBe(false);
  });
  it('property: not_in is the negation of in when the attribute is present', () => {
    const present = fc.jsonValue().filter((v) => v !== null);
    fc.assert(
      fc.property(present, fc.array(fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.double())), (actual, list) => {
        expect(op('not_in', actual, list)).toBe(!op('in', actual, list));
      }),
    );
  });
});

describe('contains / not_contains / starts_with / ends_with', () => {
  it('substring on strings (case-sensitive) and numbers', () => {
    expect(op('contains', 'hello world', 'lo w')).toBe(true);
    expect(op('contains', 'hello', 'H')).toBe(false);
    expect(op('not_contains', 'hello', 'xyz')).toBe(true);
    expect(op('not_contains', 'hello', 'ell')).toBe(false);
    expect(op('contains', 12345, '234')).toBe(true);
    expect(op('contains', 'a5b', 5)).toBe(true);
  });
  it('membership on arrays in the context', () => {
    expect(op('contains', ['beta', 'staff'], 'beta')).toBe(true);
    expect(op('contains', ['beta'], 'bet')).toBe(false);
    expect(op('not_contains', ['beta'], 'staff')).toBe(true);
  });
  it('bad rule value is false for both; unusable context value fails contains only', () => {
    expect(op('contains', 'abc', ['a'])).toBe(false);
    expect(op('not_contains', 'abc', ['a'])).toBe(false);
    expect(op('contains', { a: 'abc' }, 'a')).toBe(false);
    expect(op('not_contains', { a: 'abc' }, 'a')).toBe(true);
    expect(op('contains', true, 'true')).toBe(false);
  });
  it('starts_with / ends_with', () => {
    expect(op('starts_with', 'user@acme.com', 'user')).toBe(true);
    expect(op('starts_with', 'user@acme.com', 'acme')).toBe(false);
    expect(op('ends_with', 'user@acme.com', '@acme.com')).toBe(true);
    expect(op('ends_with', 'user@acme.com', '@ACME.com')).toBe(false);
    expect(op('ends_with', 1234, 34)).toBe(true);
    expect(op('starts_with', ['user'], 'user')).toBe(false);
    expect(op('starts_with', 'x', null)).toBe(false);
  });
});

describe('regex / not_regex', () => {
  it('searches anywhere; anchors and inline flags work', () => {
    expect(op('regex', 'user@acme.com', '@acme\\.com$')).toBe(true);
    expect(op('regex', 'user@acme.com', '^acme')).toBe(false);
    expect(op('regex', 'ACME', '(?i)acme')).toBe(true);
    expect(op('not_regex', 'user@other.com', '@acme\\.com$')).toBe(true);
    expect(op('regex', 123, '^\\d+$')).toBe(true);
  });
  it('invalid, unsupported or too long patterns are false for both', () => {
    for (const bad of ['(', 'a(?=b)', '(a)\\1', 'x'.repeat(MAX_REGEX_PATTERN_LENGTH + 1), 42, null]) {
      expect(op('regex', 'aaa', bad)).toBe(false);
      expect(op('not_regex', 'aaa', bad)).toBe(false);
    }
    // 500 characters are allowed when they compile small (a class is one instruction); 500 literals are not (regex-cost.test.ts).
    expect(compileRegex(`[${'x'.repeat(MAX_REGEX_PATTERN_LENGTH - 2)}]`)).not.toBeNull();
  });
  it('catastrophic patterns finish (RE2 semantics: no backtracking, so these would never end on a backtracking engine)', () => {
    expect(op('regex', 'a'.repeat(5000) + 'b', '^(a+)+$')).toBe(false);
    expect(op('regex', 'x'.repeat(5000), '(x+x+)+y')).toBe(false);
  });
  it('the cache is bounded', () => {
    for (let i = 0; i < REGEX_CACHE_SIZE + 50; i++) regexTest(`^p${i}$`, 'p1');
    expect(regexCacheSize()).toBeLessThanOrEqual(REGEX_CACHE_SIZE);
    // Long patterns: bounded by their total text too (512 Ki characters), not only by count.
    for (let i = 0; i < 1_200; i++) regexTest(`^${String(i).padStart(6, '0')}${'x'.repeat(MAX_REGEX_PATTERN_LENGTH - 8)}$`, 'p1');
    expect(regexCacheSize()).toBeLessThanOrEqual(Math.floor((512 * 1024) / (MAX_REGEX_PATTERN_LENGTH + 1)));
    expect(regexTest('^p1$', 'p1')).toBe(true);
  });
  it('non-text context values fail regex and pass not_regex', () => {
    expect(op('regex', { a: 1 }, '.*')).toBe(false);
    expect(op('not_regex', { a: 1 }, '.*')).toBe(true);
  });
});

describe('gt / gte / lt / lte', () => {
  it('numeric comparison incl. numeric strings', () => {
    expect(op('gt', 20, 18)).toBe(true);
    expect(op('gt', 18, 18)).toBe(false);
    expect(op('gte', 18, 18)).toBe(true);
    expect(op('lt', '17.5', 18)).toBe(true);
    expect(op('lte', 18, '18')).toBe(true);
    expect(op('gt', '1e3', 999)).toBe(true);
    expect(op('lt', -1, 0)).toBe(true);
  });
  it('non-numeric values are false', () => {
    expect(op('gt', 'abc', 1)).toBe(false);
    expect(op('gt', 5, 'abc')).toBe(false);
    expect(op('gt', true, 0)).toBe(false);
    expect(op('gt', '', 0)).toBe(false);
    expect(op('gt', ' 5', 0)).toBe(false);
    expect(op('gt', '0x10', 0)).toBe(false);
    expect(op('lt', [1], 5)).toBe(false);
    expect(toNumber(Number.POSITIVE_INFINITY)).toBeNull();
  });
});

describe('semver', () => {
  it('parses leniently (v prefix, missing minor/patch) and rejects junk', () => {
    expect(parseSemver('1.2.3')).toEqual({ major: 1, minor: 2, patch: 3, prerelease: [] });
    expect(parseSemver('v2')).toEqual({ major: 2, minor: 0, patch: 0, prerelease: [] });
    expect(parseSemver('1.2.3-rc.1+build.5')).toEqual({ major: 1, minor: 2, patch: 3, prerelease: ['rc', 1] });
    for (const bad of ['', '1.2.3.4', '01.2.3', '1.2.3-01', '1.2.3-', 'a.b.c', ' 1.2.3', '1.2.3-rc..1', 1, null]) {
      expect(parseSemver(bad)).toBeNull();
    }
  });
  it('orders prereleases per semver 2.0 §11', () => {
    const chain = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.1.0',
      '2.0.0',
      '10.0.0',
    ];
    for (let i = 0; i + 1 < chain.length; i++) {
      expect(compareSemver(parseSemver(chain[i])!, parseSemver(chain[i + 1])!)).toBe(-1);
      expect(compareSemver(parseSemver(chain[i + 1])!, parseSemver(chain[i])!)).toBe(1);
    }
  });
  it('build metadata is ignored', () => {
    expect(op('semver_eq', '1.0.0+a', '1.0.0+b')).toBe(true);
  });
  it('operators', () => {
    expect(op('semver_gt', '2.10.0', '2.9.0')).toBe(true);
    expect(op('semver_gte', '2.9.0', '2.9')).toBe(true);
    expect(op('semver_lt', '1.0.0-rc.1', '1.0.0')).toBe(true);
    expect(op('semver_lte', 'v1.0.0', '1.0.0')).toBe(true);
    expect(op('semver_eq', '1.0', '1.0.0')).toBe(true);
    expect(op('semver_gt', 'garbage', '1.0.0')).toBe(false);
    expect(op('semver_lt', 'garbage', '1.0.0')).toBe(false);
    expect(op('semver_gt', 2, '1.0.0')).toBe(false);
  });
  it('property: compareSemver is antisymmetric', () => {
    const ver = fc
      .tuple(fc.nat(5), fc.nat(5), fc.nat(5), fc.array(fc.oneof(fc.constantFrom('alpha', 'beta', 'rc', 'x-y'), fc.nat(12).map(String)), { maxLength: 3 }))
      .map(([a, b, c, pre]) => `${a}.${b}.${c}${pre.length ? '-' + pre.join('.') : ''}`);
    fc.assert(
      fc.property(ver, ver, (x, y) => {
        const a = parseSemver(x)!;
        const b = parseSemver(y)!;
        expect(compareSemver(a, b)).toBe(-compareSemver(b, a) || 0);
      }),
    );
  });
});

describe('before / after (ISO dates)', () => {
  it('parses dates and date-times, no offset meaning UTC', () => {
    expect(parseDate('2024-03-01')).toBe(Date.UTC(2024, 2, 1));
    expect(parseDate('2024-03-01T12:30:00Z')).toBe(Date.UTC(2024, 2, 1, 12, 30));
    expect(parseDate('2024-03-01T12:30:00.5+02:00')).toBe(Date.UTC(2024, 2, 1, 10, 30, 0, 500));
    expect(parseDate('2024-03-01T12:30')).toBe(Date.UTC(2024, 2, 1, 12, 30));
    expect(parseDate('0050-01-01')).toBe(new Date('0050-01-01T00:00:00Z').getTime());
    expect(parseDate(1_700_000_000_000)).toBe(1_700_000_000_000);
  });
  it('rejects malformed and out-of-range dates', () => {
    for (const bad of ['2024-02-30', '2023-02-29', '2024-13-01', '2024-01-01T24:00', '01/02/2024', 'yesterday', '', '2024-1-1', null, {}]) {
      expect(parseDate(bad)).toBeNull();
    }
    expect(parseDate('2024-02-29')).not.toBeNull();
  });
  it('operators compare strictly', () => {
    expect(op('before', '2024-01-01', '2024-06-01')).toBe(true);
    expect(op('after', '2024-01-01', '2024-06-01')).toBe(false);
    expect(op('after', '2024-06-01T00:00:01Z', '2024-06-01')).toBe(true);
    expect(op('before', '2024-06-01', '2024-06-01')).toBe(false);
    expect(op('after', '2024-06-01', '2024-06-01')).toBe(false);
    expect(op('before', 'not a date', '2024-06-01')).toBe(false);
    expect(op('after', 'not a date', '2024-06-01')).toBe(false);
    expect(op('before', '2024-01-01', 'bad')).toBe(false);
  });
  it('property: agrees with Date for Z-suffixed ISO strings', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }), (d) => {
        expect(parseDate(d.toISOString())).toBe(d.getTime());
      }),
    );
  });
});

describe('unknown operators and value validation', () => {
  it('unknown operators are false', () => {
    expect(op('sounds_like', 'US', 'US')).toBe(false);
    expect(op('', 'US', 'US')).toBe(false);
    expect(op('in_segment', 'US', 'seg')).toBe(false);
  });
  it('isValidOperatorValue', () => {
    expect(isValidOperatorValue('in', ['a', 1, true])).toBe(true);
    expect(isValidOperatorValue('in', ['a', { b: 1 }])).toBe(false);
    expect(isValidOperatorValue('regex', '(')).toBe(false);
    expect(isValidOperatorValue('gt', '10')).toBe(true);
    expect(isValidOperatorValue('semver_gt', 'x')).toBe(false);
    expect(isValidOperatorValue('before', '2024-01-01')).toBe(true);
    expect(isValidOperatorValue('is_null', undefined)).toBe(true);
    expect(isValidOperatorValue('in_segment', '')).toBe(false);
    expect(isValidOperatorValue('nope', 'x')).toBe(false);
  });
  it('scalarEquals is symmetric', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(scalarEquals(a, b)).toBe(scalarEquals(b, a));
      }),
    );
  });
  it('property: no operator throws on any values', () => {
    fc.assert(
      fc.property(fc.constantFrom(...OPERATORS, 'bogus'), fc.anything(), fc.anything(), (o, a, e) => {
        expect(typeof applyOperator(o, a, e)).toBe('boolean');
      }),
    );
  });
});
