import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkParsedContext,
  checkRawContextSize,
  checkTargetingContext,
  CONTEXT_TOO_DEEP_MESSAGE,
  CONTEXT_TOO_LARGE_MESSAGE,
  contextTooDeep,
  lookupAttribute,
  MAX_CONTEXT_BYTES,
  MAX_CONTEXT_DEPTH,
  utf8ByteLength,
} from './context.js';

describe('lookupAttribute', () => {
  it('plain attribute: top-level key, then "user.<attr>" key, then nested user.<attr>', () => {
    expect(lookupAttribute({ country: 'US' }, 'country')).toBe('US');
    expect(lookupAttribute({ 'user.country': 'US' }, 'country')).toBe('US');
    expect(lookupAttribute({ user: { country: 'US' } }, 'country')).toBe('US');
    expect(lookupAttribute({ country: 'FR', 'user.country': 'DE', user: { country: 'US' } }, 'country')).toBe('FR');
    expect(lookupAttribute({ 'user.country': 'DE', user: { country: 'US' } }, 'country')).toBe('DE');
  });
  it('dotted attribute: exact key, then nested path', () => {
    expect(lookupAttribute({ 'user.country': 'US' }, 'user.country')).toBe('US');
    expect(lookupAttribute({ user: { country: 'US' } }, 'user.country')).toBe('US');
    expect(lookupAttribute({ 'user.country': 'DE', user: { country: 'US' } }, 'user.country')).toBe('DE');
    expect(lookupAttribute({ a: { b: { c: 1 } } }, 'a.b.c')).toBe(1);
    expect(lookupAttribute({ a: [{ b: 1 }] }, 'a.0.b')).toBeUndefined();
    expect(lookupAttribute({ user: { user: { country: 'US' } } }, 'user.country')).toBeUndefined();
  });
  it('null is a value (first found wins); undefined falls through', () => {
    expect(lookupAttribute({ country: null, user: { country: 'US' } }, 'country')).toBeNull();
    expect(lookupAttribute({ country: undefined, user: { country: 'US' } }, 'country')).toBe('US');
  });
  it('never reads inherited properties; non-objects have no attributes', () => {
    expect(lookupAttribute({}, 'constructor')).toBeUndefined();
    expect(lookupAttribute({}, 'toString')).toBeUndefined();
    expect(lookupAttribute({}, '__proto__')).toBeUndefined();
    expect(lookupAttribute({ user: {} }, 'user.constructor')).toBeUndefined();
    expect(lookupAttribute(JSON.parse('{"__proto__": {"x": 1}}'), '__proto__.x')).toBe(1);
    expect(lookupAttribute(null, 'a')).toBeUndefined();
    expect(lookupAttribute(['a'], '0')).toBeUndefined();
    expect(lookupAttribute('str', 'length')).toBeUndefined();
    expect(lookupAttribute({ a: 1 }, '')).toBeUndefined();
  });
});

/** Naive reference definitions. */
function naiveDepth(v: unknown): number {
  if (typeof v !== 'object' || v === null) return 0;
  const children = Array.isArray(v) ? v : Object.values(v);
  return 1 + children.reduce<number>((m, c) => Math.max(m, naiveDepth(c)), 0);
}
function naiveCheck(ctx: unknown): string | null {
  if (naiveDepth(ctx) > 10) return CONTEXT_TOO_DEEP_MESSAGE;
  const text = JSON.stringify(ctx);
  if (text !== undefined && new TextEncoder().encode(text).length > 8192) return CONTEXT_TOO_LARGE_MESSAGE;
  return null;
}
function nest(levels: number): unknown {
  let v: unknown = {};
  for (let i = 1; i < levels; i++) v = i % 2 ? { a: v } : [v];
  return v;
}

describe('context limits', () => {
  it('exports the limits and exact messages', () => {
    expect(MAX_CONTEXT_DEPTH).toBe(10);
    expect(MAX_CONTEXT_BYTES).toBe(8192);
    expect(CONTEXT_TOO_DEEP_MESSAGE).toBe('Targeting context nested more than 10 levels deep');
    expect(CONTEXT_TOO_LARGE_MESSAGE).toBe('Targeting context larger than 8192 bytes');
  });
  it('depth: 10 levels pass, 11 fail (objects and arrays both count)', () => {
    expect(naiveDepth(nest(10))).toBe(10);
    expect(checkTargetingContext(nest(10))).toBeNull();
    expect(checkTargetingContext(nest(11))).toBe(CONTEXT_TOO_DEEP_MESSAGE);
    expect(checkTargetingContext({ a: 1, b: 'x', c: null })).toBeNull();
    expect(checkTargetingContext({})).toBeNull();
  });
  it('depth is checked first and is iterative (very deep input does not overflow)', () => {
    let deep: unknown = {};
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(checkTargetingContext(deep)).toBe(CONTEXT_TOO_DEEP_MESSAGE);
    const deepAndLarge = { big: 'x'.repeat(10_000), n: nest(12) };
    expect(checkTargetingContext(deepAndLarge)).toBe(CONTEXT_TOO_DEEP_MESSAGE);
  });
  it('cycles are reported as too deep, not looped on', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(checkTargetingContext(a)).toBe(CONTEXT_TOO_DEEP_MESSAGE);
  });
  it('size: compact UTF-8 JSON bytes, 8192 allowed, 8193 not', () => {
    const base = JSON.stringify({ s: '' }).length; // {"s":""} = 8
    expect(checkTargetingContext({ s: 'x'.repeat(8192 - base) })).toBeNull();
    expect(checkTargetingContext({ s: 'x'.repeat(8193 - base) })).toBe(CONTEXT_TOO_LARGE_MESSAGE);
    // multi-byte: é = 2 bytes, 🎉 = 4 bytes
    expect(checkTargetingContext({ s: 'é'.repeat((8192 - base) / 2) })).toBeNull();
    expect(checkTargetingContext({ s: 'é'.repeat((8192 - base) / 2) + 'x' })).toBe(CONTEXT_TOO_LARGE_MESSAGE);
    expect(checkTargetingContext({ s: '🎉'.repeat(2046) })).toBeNull(); // 8 + 8184
    expect(checkTargetingContext({ s: '🎉'.repeat(2047) })).toBe(CONTEXT_TOO_LARGE_MESSAGE);
  });
  it('unserialisable values count as too large and never throw', () => {
    expect(checkTargetingContext({ n: 10n })).toBe(CONTEXT_TOO_LARGE_MESSAGE);
    expect(checkTargetingContext(undefined)).toBeNull();
  });
  it('utf8ByteLength matches TextEncoder (incl. lone surrogates)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(utf8ByteLength(s)).toBe(new TextEncoder().encode(s).length);
      }),
    );
    expect(utf8ByteLength('\ud800')).toBe(3);
    expect(utf8ByteLength('\ud800x')).toBe(4);
    expect(utf8ByteLength('\udc00\ud800')).toBe(6);
  });
  it('checkRawContextSize measures the text as sent', () => {
    expect(checkRawContextSize('x'.repeat(8192))).toBeNull();
    expect(checkRawContextSize('x'.repeat(8193))).toBe(CONTEXT_TOO_LARGE_MESSAGE);
    expect(checkRawContextSize('é'.repeat(4096))).toBeNull();
    expect(checkRawContextSize('é'.repeat(4097))).toBe(CONTEXT_TOO_LARGE_MESSAGE);
  });
  it('checkParsedContext(text, JSON.parse(text)) answers checkTargetingContext, the compacted size bounded by 6 bytes per unit', () => {
    const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length;
    // JSON texts weighted towards what grows when compacted: exponent numbers and lone surrogates (raw or escaped).
    const growing = fc.oneof(
      fc.constantFrom('1e20', '-9e20', '1E+20', '5e-7', '1e21', '1.5e20', '"\ud800"', '"\\udc00"', '"é"', '"\u2028"'),
      fc.json(),
    );
    const text = fc.oneof(
      fc.json({ maxDepth: 12 }),
      fc.array(growing, { maxLength: 400 }).map((items) => `{"a":[${items.join(',')}]}`),
    );
    fc.assert(
      fc.property(text, (t) => {
        const ctx = JSON.parse(t);
        expect(bytes(ctx)).toBeLessThanOrEqual(6 * t.length);
        expect(checkParsedContext(t, ctx)).toBe(checkTargetingContext(ctx));
      }),
      { numRuns: 2000 },
    );
    // Around the limit: a short text is not serialised, a long one is, and both answer as the full check.
    for (const n of [1300, 1365, 1366, 4000]) {
      const t = `{"a":[${Array(n).fill('1e20').join(',')}]}`;
      expect(checkParsedContext(t, JSON.parse(t))).toBe(checkTargetingContext(JSON.parse(t)));
    }
    const deep = `${'['.repeat(11)}${']'.repeat(11)}`;
    expect(checkParsedContext(deep, JSON.parse(deep))).toBe(CONTEXT_TOO_DEEP_MESSAGE);
  });
  it('checkParsedContext(text, part) answers checkTargetingContext(part) for a part of JSON.parse(text): a property value, or an object without a key', () => {
    const growing = fc.oneof(fc.constantFrom('1e20', '"\ud800"', '"\\udc00"', '"é"'), fc.json());
    const text = fc.tuple(fc.array(growing, { maxLength: 1500 }), fc.json()).map(([items, other]) => `{"context":{"targetingKey":${other},"a":[${items.join(',')}]},"x":1}`);
    fc.assert(
      fc.property(text, (t) => {
        const body = JSON.parse(t);
        const { targetingKey: _, ...rest } = body.context;
        for (const part of [body.context, rest, rest.a]) expect(checkParsedContext(t, part)).toBe(checkTargetingContext(part));
      }),
      { numRuns: 300 },
    );
  });
  it('property: agrees with the naive definition on JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 14 }), (v) => {
        expect(checkTargetingContext(v)).toBe(naiveCheck(v));
        expect(contextTooDeep(v)).toBe(naiveDepth(v) > 10);
      }),
      { numRuns: 300 },
    );
  });
  it('property: agrees with the naive definition around the size limit', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1500, maxLength: 3000 }), fc.integer({ min: 1, max: 4 }), (s, n) => {
        const ctx = { parts: Array.from({ length: n }, () => s) };
        expect(checkTargetingContext(ctx)).toBe(naiveCheck(ctx));
      }),
      { numRuns: 200 },
    );
  });
  it('property: deep chains agree with the naive definition', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), (levels) => {
        const v = nest(levels);
        expect(checkTargetingContext(v)).toBe(levels > 10 ? CONTEXT_TOO_DEEP_MESSAGE : null);
      }),
    );
  });
});
