import { describe, expect, it } from 'vitest';
import { Uplift } from '../src/index.js';
import type { Ruleset } from '../src/types.js';

const flag = (key: string, extra: Record<string, unknown> = {}) => ({
  id: '00000000-0000-4000-8000-000000000001', key, status: 'active', is_active: true, rollout_percentage: 100, targeting_rules: null, default_value: false, ...extra,
});
const bootstrap = {
  bucketing: { name: 'murmur3_32', version: 1 },
  split_bucketing: { name: 'murmur3_32_split', version: 1 },
  flags: [
    flag('banner'),
    flag('copy', { value_type: 'string', variations: [{ key: 'a', value: 'Buy' }, { key: 'b', value: 'Order' }], default_variation: 'b', off_variation: null }),
    flag('off-copy', { is_active: false, status: 'inactive', value_type: 'string', variations: [{ key: 'a', value: 'Buy' }, { key: 'b', value: 'Order' }], default_variation: 'b', off_variation: null }),
  ],
  segments: [],
} as unknown as Ruleset;
const client = new Uplift({ baseUrl: 'http://uplift.invalid', apiKey: 'k', bootstrap, updates: 'off', fetch: () => Promise.reject(new Error('offline')) });

describe('getValue and getDetails', () => {
  it('serve a typed flag’s variation, and the default where it serves none', () => {
    expect(client.getValue('copy', 'u1', 'fallback')).toBe('Order');
    expect(client.getDetails('copy', 'u1', 'fallback')).toEqual({ value: 'Order', variation: 'b', reason: 'rollout', variation_reason: 'default', is_default: false });
    expect(client.getDetails('off-copy', 'u1', 'fallback')).toEqual({ value: 'fallback', reason: 'disabled', variation_reason: 'off', is_default: true });
    expect(client.getDetails('nope', 'u1', 'fallback')).toEqual({ value: 'fallback', reason: 'not_found', is_default: true });
  });

  it('answer the default when its type is not the flag’s', () => {
    expect(client.getDetails('copy', 'u1', 3)).toEqual({ value: 3, reason: 'type_mismatch', is_default: true });
    expect(client.getDetails('banner', 'u1', 'x')).toEqual({ value: 'x', reason: 'type_mismatch', is_default: true });
  });

  it('read a boolean flag as on or off', () => {
    expect(client.getDetails('banner', 'u1', false)).toEqual({ value: true, variation: 'on', reason: 'rollout', is_default: false });
    expect(client.getValue('banner', 'u1', false)).toBe(client.isEnabled('banner', 'u1'));
  });

  it('refuse a ruleset whose split bucketing this SDK does not know', () => {
    expect(() => new Uplift({ baseUrl: 'http://x.invalid', apiKey: 'k', updates: 'off', bootstrap: { ...bootstrap, split_bucketing: { name: 'murmur3_32_split', version: 2 } } })).toThrow(/split bucketing/);
  });
});
