import { describe, expect, it } from 'vitest';
import vectors from '../../test/vectors/flags.json' with { type: 'json' };
import { Uplift } from '../src/index.js';
import type { Ruleset } from '../src/types.js';

// The golden flag evaluations (also run against the service by test/sdk/golden.test.ts), on a client holding the
// vectors' flags and segments as GET /sdk/ruleset would send them.
const bootstrap: Ruleset = {
  bucketing: vectors.bucketing,
  flags: vectors.flags.map((f, i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    key: f.key,
    status: f.status as Ruleset['flags'][number]['status'],
    is_active: f.status === 'active',
    rollout_percentage: f.rollout_percentage,
    targeting_rules: f.targeting_rules,
    default_value: false,
  })),
  segments: vectors.segments.map((s) => ({ id: s.id, kind: 'rules', status: 'active', rules: s.rules, valid: true })),
};
const client = new Uplift({ baseUrl: 'http://uplift.invalid', apiKey: 'k', bootstrap, updates: 'off', fetch: () => Promise.reject(new Error('offline')) });

describe('golden flag vectors on @uplift/sdk', () => {
  it.each(vectors.cases.map((c) => [c.flag_key, c.user_id, c] as const))('evaluate %s for %s', (flagKey, userId, c) => {
    expect(client.evaluate(flagKey, userId, c.context)).toEqual(c.expected);
    expect(client.isEnabled(flagKey, userId, c.context)).toBe(c.expected.enabled);
  });

  it.each(vectors.users.map((u) => [u.user_id, u] as const))('allEnabled for %s', (userId, u) => {
    expect(client.allEnabled(userId, u.context)).toEqual(u.expected);
  });
});
