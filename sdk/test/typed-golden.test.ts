import { describe, expect, it } from 'vitest';
import vectors from '../../test/vectors/typed-flags.json' with { type: 'json' };
import { splitBucket } from '../../src/targeting/index.js';
import { Uplift } from '../src/index.js';
import type { Ruleset } from '../src/types.js';

// The golden typed-flag evaluations (also run against the service by test/sdk/typed-golden.test.ts), on a client
// holding the vectors' flags and segment as GET /sdk/ruleset would send them.
const bootstrap = {
  bucketing: { name: 'murmur3_32', version: 1 },
  split_bucketing: vectors.split_bucketing,
  flags: vectors.flags.map((f, i) => ({ id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, ...f, is_active: f.status === 'active', default_value: false })),
  segments: vectors.segments.map((s) => ({ id: s.id, kind: 'rules', status: 'active', rules: s.rules, valid: true })),
} as unknown as Ruleset;
const client = new Uplift({ baseUrl: 'http://uplift.invalid', apiKey: 'k', bootstrap, updates: 'off', fetch: () => Promise.reject(new Error('offline')) });

const DEFAULTS: Record<string, unknown> = { string: 'code default', number: -1, json: { code: 'default' } };

describe('golden typed-flag vectors on @uplift/sdk', () => {
  it('hashes splits as the vectors pin them', () => {
    for (const v of vectors.split_buckets) expect(splitBucket(v.flag_key, v.user_id)).toBe(v.bucket);
  });

  it.each(vectors.cases.map((c) => [c.flag_key, c.user_id, c] as const))('evaluate and getDetails %s for %s', (flagKey, userId, c) => {
    expect(client.evaluate(flagKey, userId, c.context)).toEqual(c.expected);
    const type = vectors.flags.find((f) => f.key === flagKey)!.value_type;
    const fallback = DEFAULTS[type];
    const expected = c.expected as { variation?: string; value?: unknown; reason: string; variation_reason?: string };
    expect(client.getDetails(flagKey, userId, fallback, c.context)).toEqual(
      expected.variation === undefined
        ? { value: fallback, reason: expected.reason, variation_reason: expected.variation_reason, is_default: true }
        : { value: expected.value, variation: expected.variation, reason: expected.reason, variation_reason: expected.variation_reason, is_default: false },
    );
    expect(client.getValue(flagKey, userId, fallback, c.context)).toEqual(expected.variation === undefined ? fallback : expected.value);
  });
});
