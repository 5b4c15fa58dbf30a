import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BUCKETING,
  bucketFor,
  experimentSalt,
  flagSalt,
  holdoutSalt,
  inRollout,
  murmur3_32,
  murmur3_32_string,
  mutexSalt,
  percentageToBuckets,
  pickWeighted,
} from './hash.js';

interface Vectors {
  bucketing: { name: string; version: number };
  murmur3_reference: Array<{ input: string; seed: number; hash: number }>;
  cases: Array<{ salt: string; unit_id: string; bucket: number; hash?: number }>;
}
const vectors = JSON.parse(readFileSync(new URL('../../test/vectors/bucketing.json', import.meta.url), 'utf8')) as Vectors;

describe('murmur3_32 reference values', () => {
  it('matches published MurmurHash3_x86_32 vectors', () => {
    expect(murmur3_32_string('', 0)).toBe(0);
    expect(murmur3_32_string('hello', 0)).toBe(0x248bfa47);
    expect(murmur3_32_string('hello', 0)).toBe(613153351);
    expect(murmur3_32(new Uint8Array([0, 0, 0, 0]), 0)).toBe(0x2362f9de);
    for (const r of vectors.murmur3_reference) expect(murmur3_32_string(r.input, r.seed)).toBe(r.hash);
  });
});

describe('golden vectors (test/vectors/bucketing.json)', () => {
  it('describes the current bucketing version', () => {
    expect(vectors.bucketing.name).toBe(BUCKETING.name);
    expect(vectors.bucketing.version).toBe(BUCKETING.version);
    expect(vectors.cases.length).toBeGreaterThanOrEqual(45);
  });
  it('every case reproduces', () => {
    for (const v of vectors.cases) {
      expect(bucketFor(v.salt, v.unit_id), `${v.salt} / ${v.unit_id.slice(0, 20)}`).toBe(v.bucket);
      if (v.hash !== undefined) expect(murmur3_32_string(`${v.salt}:${v.unit_id}`)).toBe(v.hash);
    }
  });
  it('covers empty strings, unicode, emoji and long ids', () => {
    const ids = vectors.cases.map((c) => c.unit_id);
    expect(ids).toContain('');
    expect(vectors.cases.some((c) => c.salt === '')).toBe(true);
    expect(ids.some((id) => /\p{Extended_Pictographic}/u.test(id))).toBe(true);
    expect(ids.some((id) => /[^\x00-\x7f]/.test(id))).toBe(true);
    expect(ids.some((id) => id.length >= 1000)).toBe(true);
  });
});

describe('bucketFor', () => {
  it('is deterministic and in [0, 10000)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), (salt, id) => {
        const b = bucketFor(salt, id);
        expect(Number.isInteger(b)).toBe(true);
        expect(b).toBeGreaterThanOrEqual(0);
        expect(b).toBeLessThan(10000);
        expect(bucketFor(salt, id)).toBe(b);
      }),
    );
  });
  it('bucket = floor(h * 10000 / 2^32)', () => {
    const h = murmur3_32_string('exp:x:u1');
    expect(bucketFor('exp:x', 'u1')).toBe(Math.floor((h * 10000) / 2 ** 32));
  });
  it('is uniform: chi-square over 100k ids into 100 buckets', () => {
    const counts = new Array<number>(100).fill(0);
    const n = 100_000;
    for (let i = 0; i < n; i++) counts[Math.floor(bucketFor('exp:uniformity', `user-${i}`) / 100)]++;
    const expected = n / 100;
    const chi2 = counts.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
    // df = 99: mean 99, p = 0.001 critical ≈ 148; generous threshold.
    expect(chi2).toBeLessThan(170);
  });
  it('salts are independent: 10x10 contingency chi-square', () => {
    const n = 100_000;
    const table = Array.from({ length: 10 }, () => new Array<number>(10).fill(0));
    for (let i = 0; i < n; i++) {
      const id = `unit-${i}`;
      table[Math.floor(bucketFor(flagSalt('checkout'), id) / 1000)][Math.floor(bucketFor(experimentSalt('checkout'), id) / 1000)]++;
    }
    const rows = table.map((r) => r.reduce((a, b) => a + b, 0));
    const cols = table[0].map((_, j) => table.reduce((a, r) => a + r[j], 0));
    let chi2 = 0;
    for (let i = 0; i < 10; i++) {
      for (let j = 0; j < 10; j++) {
        const e = (rows[i] * cols[j]) / n;
        chi2 += (table[i][j] - e) ** 2 / e;
      }
    }
    // df = 81: mean 81, p = 0.001 critical ≈ 125; generous threshold.
    expect(chi2).toBeLessThan(140);
  });
});

describe('inRollout / pickWeighted / salts', () => {
  it('salt builders', () => {
    expect(flagSalt('k')).toBe('flag:k');
    expect(experimentSalt('k')).toBe('exp:k');
    expect(holdoutSalt('h1')).toBe('holdout:h1');
    expect(mutexSalt('g1')).toBe('mex:g1');
  });
  it('percentages map to buckets with 0.01 precision and clamp', () => {
    expect(percentageToBuckets(0)).toBe(0);
    expect(percentageToBuckets(0.01)).toBe(1);
    expect(percentageToBuckets(12.34)).toBe(1234);
    expect(percentageToBuckets(100)).toBe(10000);
    expect(percentageToBuckets(150)).toBe(10000);
    expect(percentageToBuckets(-5)).toBe(0);
    expect(percentageToBuckets(Number.NaN)).toBe(0);
  });
  it('0 % admits nobody, 100 % everybody, 25 % about a quarter', () => {
    let hits = 0;
    for (let i = 0; i < 20_000; i++) {
      const id = `u${i}`;
      expect(inRollout('flag:f', id, 0)).toBe(false);
      expect(inRollout('flag:f', id, 100)).toBe(true);
      if (inRollout('flag:f', id, 25)) hits++;
    }
    expect(hits / 20_000).toBeGreaterThan(0.24);
    expect(hits / 20_000).toBeLessThan(0.26);
  });
  it('property: rollout is monotonic in the percentage (raising it never drops a unit)', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 10000 }), fc.integer({ min: 0, max: 10000 }), (id, a, b) => {
        const [lo, hi] = a <= b ? [a / 100, b / 100] : [b / 100, a / 100];
        if (inRollout('flag:m', id, lo)) expect(inRollout('flag:m', id, hi)).toBe(true);
      }),
    );
  });
  it('pickWeighted follows cumulative allocation', () => {
    const counts = [0, 0, 0];
    const n = 30_000;
    for (let i = 0; i < n; i++) counts[pickWeighted('exp:w', `u${i}`, [33.33, 33.33, 33.34])]++;
    for (const c of counts) expect(Math.abs(c / n - 1 / 3)).toBeLessThan(0.015);
    // The index is the range holding the bucket.
    fc.assert(
      fc.property(fc.string(), (id) => {
        const b = bucketFor('exp:w', id);
        expect(pickWeighted('exp:w', id, [10, 20, 70])).toBe(b < 1000 ? 0 : b < 3000 ? 1 : 2);
        expect(pickWeighted('exp:w', id, [10, 20])).toBe(b < 1000 ? 0 : b < 3000 ? 1 : -1);
        expect(pickWeighted('exp:w', id, [0, 100])).toBe(1);
      }),
    );
  });
  it('pickWeighted rejects unusable weights', () => {
    expect(pickWeighted('s', 'u', [])).toBe(-1);
    expect(pickWeighted('s', 'u', [50, -10, 60])).toBe(-1);
    expect(pickWeighted('s', 'u', [Number.NaN, 100])).toBe(-1);
  });
});
