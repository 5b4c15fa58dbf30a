import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bucketerFor, bucketFor, BucketUnit, murmur3_32, murmur3_32_string } from './hash.js';

// The string hash encodes UTF-8 inside its loop; TextEncoder is the reference for the bytes.
const encoder = new TextEncoder();
const referenceBucket = (salt: string, unit: string) => Math.floor((murmur3_32(encoder.encode(`${salt}:${unit}`)) * 10000) / 2 ** 32);

/** UTF-16 strings weighted towards every encoding length and towards surrogates, paired and lone. */
const arbUtf16 = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0, max: 0x7f }),
      fc.integer({ min: 0x80, max: 0x7ff }),
      fc.integer({ min: 0x800, max: 0xffff }),
      fc.integer({ min: 0xd800, max: 0xdbff }),
      fc.integer({ min: 0xdc00, max: 0xdfff }),
    ),
    { maxLength: 24 },
  )
  .map((units) => String.fromCharCode(...units));
const arbText = fc.oneof(arbUtf16, fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }));

describe('murmur3 over a string, encoded inline', () => {
  it('equals murmur3 over TextEncoder bytes, lone surrogates as U+FFFD, any seed', () => {
    fc.assert(
      fc.property(arbText, fc.integer({ min: 0, max: 0xffffffff }), (text, seed) => {
        expect(murmur3_32_string(text, seed)).toBe(murmur3_32(encoder.encode(text), seed));
      }),
      { numRuns: 5000 },
    );
  });

  it('bucketFor(salt, unit) hashes salt + ":" + unit as TextEncoder would encode the joined string', () => {
    fc.assert(
      fc.property(arbText, arbText, (salt, unit) => {
        expect(bucketFor(salt, unit)).toBe(referenceBucket(salt, unit));
      }),
      { numRuns: 5000 },
    );
  });

  it('bucketerFor(salt) answers bucketFor(salt, unit), the salt hashed once', () => {
    fc.assert(
      fc.property(arbText, fc.array(arbText, { maxLength: 4 }), (salt, units) => {
        const bucketOf = bucketerFor(salt);
        for (const unit of units) expect(bucketOf(new BucketUnit(unit))).toBe(bucketFor(salt, unit));
      }),
      { numRuns: 3000 },
    );
  });

  it('bucketerFor(salt)(unit) answers bucketFor(salt, unit.id), one prepared unit read under many salts', () => {
    fc.assert(
      fc.property(arbText, fc.array(arbText, { minLength: 1, maxLength: 8 }), (unitId, salts) => {
        const unit = new BucketUnit(unitId);
        for (const salt of salts) expect(bucketerFor(salt)(unit)).toBe(bucketFor(salt, unitId));
      }),
      { numRuns: 3000 },
    );
    // Every offset a salt prefix can leave (prefix length mod 4), with ids shorter and longer than one word.
    for (const unitId of ['', 'a', 'ab', 'abc', 'abcd', 'user-12345', 'é', '\ud83d\ude00x', '\ud800']) {
      const unit = new BucketUnit(unitId);
      for (const salt of ['', 'f', 'fl', 'fla', 'flag:k', 'flag:ké']) expect(bucketerFor(salt)(unit)).toBe(referenceBucket(salt, unitId));
    }
  });

  it('a surrogate pair split by the ":" separator is two lone surrogates', () => {
    for (const [salt, unit] of [['a\ud83d', '\ude00b'], ['\ud83d', ''], ['', '\ude00'], ['x', '\ud83d\ude00'], ['\udbff', '\udfff']]) {
      expect(bucketFor(salt, unit)).toBe(referenceBucket(salt, unit));
      expect(bucketerFor(salt)(new BucketUnit(unit))).toBe(referenceBucket(salt, unit));
    }
  });
});
