import { ErrorCode, OpenFeature } from '@openfeature/server-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { ruleset } from '../../sdk/test/fake-service.js';
import { UpliftProvider } from '../src/index.js';

const COUNTRY_DE = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'DE' }] }] };
const typed = (key: string, value_type: 'string' | 'number' | 'json', values: [unknown, unknown], extra: Record<string, unknown> = {}) => ({
  key, value_type, variations: [{ key: 'a', value: values[0] }, { key: 'b', value: values[1] }], default_variation: 'a', off_variation: null, ...extra,
});
const RULESET = {
  ...ruleset([
    typed('copy', 'string', ['Buy now', 'Place order'], { variation_rules: [{ targeting_rules: COUNTRY_DE, variation: 'b' }] }),
    typed('limit', 'number', [10, 2500], { variation_split: [{ variation: 'a', weight: 0 }, { variation: 'b', weight: 100 }], default_variation: null }),
    typed('config', 'json', [{ region: 'eu' }, { region: 'us' }]),
    typed('dark', 'string', ['x', 'y'], { status: 'inactive', is_active: false }),
    typed('dark-off', 'string', ['x', 'y'], { status: 'inactive', is_active: false, off_variation: 'b' }),
  ] as never),
  split_bucketing: { name: 'murmur3_32_split', version: 1 },
};

let domains = 0;
const providers: UpliftProvider[] = [];
async function client() {
  const provider = new UpliftProvider({ baseUrl: 'http://uplift.test', apiKey: 'k', bootstrap: RULESET, updates: 'off', fetch: () => Promise.reject(new Error('offline')) });
  providers.push(provider);
  const domain = `uplift-typed-${++domains}`;
  await OpenFeature.setProviderAndWait(domain, provider);
  return OpenFeature.getClient(domain);
}
afterEach(async () => {
  await Promise.all(providers.splice(0).map((p) => p.onClose()));
});

describe('UpliftProvider: typed flags, evaluated locally', () => {
  it('resolves string, number and object values with variant and reason', async () => {
    const c = await client();
    expect(await c.getStringDetails('copy', 'default', { targetingKey: 'u1', country: 'DE' })).toMatchObject({
      value: 'Place order', variant: 'b', reason: 'TARGETING_MATCH', flagMetadata: { uplift_reason: 'rollout', variation_reason: 'rule' },
    });
    expect(await c.getStringDetails('copy', 'default', { targetingKey: 'u1' })).toMatchObject({ value: 'Buy now', variant: 'a', reason: 'SPLIT' });
    expect(await c.getNumberDetails('limit', 0, { targetingKey: 'u1' })).toMatchObject({ value: 2500, variant: 'b', reason: 'SPLIT' });
    expect(await c.getObjectDetails('config', {}, { targetingKey: 'u1' })).toMatchObject({ value: { region: 'eu' }, variant: 'a' });
  });

  it('answers off_variation, or the code default, when the flag is off', async () => {
    const c = await client();
    const dark = await c.getStringDetails('dark', 'code', { targetingKey: 'u1' });
    expect(dark).toMatchObject({ value: 'code', reason: 'DISABLED' });
    expect(dark.variant).toBeUndefined();
    expect(dark.errorCode).toBeUndefined();
    expect(await c.getStringDetails('dark-off', 'code', { targetingKey: 'u1' })).toMatchObject({ value: 'y', variant: 'b', reason: 'DISABLED' });
  });

  it('answers the default with TYPE_MISMATCH for a value of another type, and TARGETING_KEY_MISSING without a key', async () => {
    const c = await client();
    expect(await c.getNumberDetails('copy', 7, { targetingKey: 'u1' })).toMatchObject({ value: 7, errorCode: ErrorCode.TYPE_MISMATCH });
    expect(await c.getBooleanDetails('copy', false, { targetingKey: 'u1' })).toMatchObject({ value: false, errorCode: ErrorCode.TYPE_MISMATCH });
    expect(await c.getStringDetails('copy', 'd', {})).toMatchObject({ value: 'd', errorCode: ErrorCode.TARGETING_KEY_MISSING });
  });
});
