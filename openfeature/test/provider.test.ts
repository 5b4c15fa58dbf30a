import { ErrorCode, OpenFeature, ProviderEvents, ProviderStatus, type EventDetails } from '@openfeature/server-sdk';
import { Uplift } from '@uplift/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { eventStream, FakeService, json, ruleset } from '../../sdk/test/fake-service.js';
import { UpliftProvider } from '../src/index.js';

const RULES = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'plan', operator: 'equals', value: 'pro' }] }] };
const V1 = ruleset([{ key: 'checkout', targeting_rules: RULES }, { key: 'half', rollout_percentage: 0 }, { key: 'off', status: 'inactive', is_active: false }]);
const V2 = ruleset([{ key: 'checkout', targeting_rules: null }, { key: 'half', rollout_percentage: 0 }, { key: 'off', status: 'inactive', is_active: false }]);

let domains = 0;
const providers: UpliftProvider[] = [];
/** An OpenFeature client bound to a fresh domain served by this provider, once ready. */
async function clientFor(provider: UpliftProvider) {
  const domain = `uplift-test-${++domains}`;
  providers.push(provider);
  await OpenFeature.setProviderAndWait(domain, provider);
  return OpenFeature.getClient(domain);
}
afterEach(async () => {
  await Promise.all(providers.splice(0).map((p) => p.onClose()));
});

const assignment = (configuration: Record<string, unknown> | null, assigned = true) => ({
  experiment_key: 'exp', user_id: 'u1', variant_id: '00000000-0000-4000-8000-000000000009', variant_name: assigned ? 'treatment' : 'control',
  is_control: !assigned, configuration, assigned, reason: assigned ? 'assigned' : 'holdout',
});

describe('UpliftProvider through the OpenFeature client', () => {
  it('resolves boolean flags locally with OpenFeature reasons and variants', async () => {
    const client = await clientFor(new UpliftProvider({ baseUrl: 'http://uplift.test', apiKey: 'k', bootstrap: V1, updates: 'off' }));
    expect(await client.getBooleanDetails('checkout', false, { targetingKey: 'u1', plan: 'pro' })).toMatchObject({
      flagKey: 'checkout', value: true, variant: 'on', reason: 'TARGETING_MATCH', flagMetadata: { uplift_reason: 'targeting_match', rule: 'plan equals pro' },
    });
    expect(await client.getBooleanDetails('checkout', true, { targetingKey: 'u1', plan: 'free' })).toMatchObject({ value: false, variant: 'off', reason: 'DEFAULT' });
    expect(await client.getBooleanDetails('half', true, { targetingKey: 'u1' })).toMatchObject({ value: false, reason: 'SPLIT' });
    expect(await client.getBooleanDetails('off', true, { targetingKey: 'u1' })).toMatchObject({ value: false, reason: 'DISABLED' });
    expect(await client.getBooleanValue('checkout', false, { targetingKey: 'u1', user: { plan: 'pro' } })).toBe(true);
  });

  it('compares Date values of the context as the service does, as their ISO text', async () => {
    const after = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'signed_up', operator: 'after', value: '2024-01-01T00:00:00Z' }] }] };
    const equal = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'user.seen', operator: 'equals', value: '2025-05-01T00:00:00.000Z' }] }] };
    const bootstrap = ruleset([{ key: 'new-users', targeting_rules: after }, { key: 'seen', targeting_rules: equal }]);
    const client = await clientFor(new UpliftProvider({ baseUrl: 'http://uplift.test', apiKey: 'k', bootstrap, updates: 'off' }));
    const may2025 = new Date('2025-05-01T00:00:00Z');
    expect(await client.getBooleanDetails('new-users', false, { targetingKey: 'u1', signed_up: may2025 })).toMatchObject({ value: true, reason: 'TARGETING_MATCH' });
    expect(await client.getBooleanValue('new-users', true, { targetingKey: 'u1', signed_up: new Date('2023-05-01T00:00:00Z') })).toBe(false);
    expect(await client.getBooleanValue('seen', false, { targetingKey: 'u1', user: { seen: may2025 } })).toBe(true);
  });

  it('answers the default value with an error code for an unknown flag or a missing targeting key', async () => {
    const client = await clientFor(new UpliftProvider({ baseUrl: 'http://uplift.test', apiKey: 'k', bootstrap: V1, updates: 'off' }));
    expect(await client.getBooleanDetails('nope', true, { targetingKey: 'u1' })).toMatchObject({ value: true, reason: 'ERROR', errorCode: ErrorCode.FLAG_NOT_FOUND });
    expect(await client.getBooleanDetails('checkout', true, { plan: 'pro' })).toMatchObject({ value: true, reason: 'ERROR', errorCode: ErrorCode.TARGETING_KEY_MISSING });
  });

  it('resolves string, number and object flags from the experiment variant', async () => {
    const service = new FakeService();
    const configs: Record<string, ReturnType<typeof assignment>> = {
      copy: assignment({ value: 'Buy now' }),
      price: assignment({ value: 9.99 }),
      layout: assignment({ columns: 3 }),
      plain: assignment(null, false),
    };
    service.on('POST', '/tracking/assign', (req) => {
      const found = configs[(req.body as { experiment_key: string }).experiment_key];
      return found ? json(200, found) : json(404, { detail: 'Experiment not found' });
    });
    const client = await clientFor(new UpliftProvider({ baseUrl: 'http://uplift.test', apiKey: 'k', bootstrap: V1, updates: 'off', fetch: service.fetch }));
    const ctx = { targetingKey: 'u1', country: 'US' };
    expect(await client.getStringDetails('copy', 'x', ctx)).toMatchObject({ value: 'Buy now', variant: 'treatment', reason: 'SPLIT' });
    expect(await client.getStringDetails('plain', 'x', ctx)).toMatchObject({ value: 'control', variant: 'control', reason: 'DEFAULT', flagMetadata: { uplift_reason: 'holdout' } });
    expect(await client.getNumberValue('price', 0, ctx)).toBe(9.99);
    expect(await client.getNumberDetails('copy', 1, ctx)).toMatchObject({ value: 1, errorCode: ErrorCode.TYPE_MISMATCH });
    expect(await client.getObjectValue('layout', {}, ctx)).toEqual({ columns: 3 });
    expect(await client.getObjectDetails('missing', { a: 1 }, ctx)).toMatchObject({ value: { a: 1 }, errorCode: ErrorCode.FLAG_NOT_FOUND });
    expect(service.sent[0].body).toEqual({ experiment_key: 'copy', user_id: 'u1', context: { country: 'US' } });
  });

  it('emits configuration changes naming the flags that changed', async () => {
    const service = new FakeService().on('GET', '/sdk/ruleset', () => json(200, V1, { etag: '"v1"' }));
    const stream = eventStream();
    service.on('GET', '/sdk/ruleset/stream', (req) => {
      req.signal?.addEventListener('abort', () => stream.end());
      return stream.response;
    });
    const provider = new UpliftProvider(new Uplift({ baseUrl: 'http://uplift.test', apiKey: 'k', fetch: service.fetch }));
    const client = await clientFor(provider);
    expect(client.providerStatus).toBe(ProviderStatus.READY);
    const changed = new Promise<EventDetails>((resolve) => client.addHandler(ProviderEvents.ConfigurationChanged, (d) => resolve(d!)));
    stream.push(`event: ruleset\nid: v2\ndata: ${JSON.stringify({ version: 'v2', heartbeat_seconds: 15, ruleset: V2 })}\n\n`);
    expect(await changed).toMatchObject({ flagsChanged: ['checkout'], metadata: { version: 'v2' } });
    expect(await client.getBooleanValue('checkout', false, { targetingKey: 'u1' })).toBe(true);
    await provider.client.close();
  });

  it('fails initialisation when the API key is refused', async () => {
    const service = new FakeService().on('GET', '/sdk/ruleset', () => json(401, { detail: 'Invalid or missing API key' }));
    const provider = new UpliftProvider({ baseUrl: 'http://uplift.test', apiKey: 'bad', fetch: service.fetch });
    providers.push(provider);
    await expect(OpenFeature.setProviderAndWait(`uplift-test-${++domains}`, provider)).rejects.toMatchObject({ status: 401 });
  });

  it('records OpenFeature tracking events as Uplift events', async () => {
    const service = new FakeService().on('POST', '/tracking/batch', () => json(200, { errors: [] }));
    const client = await clientFor(new UpliftProvider({ baseUrl: 'http://uplift.test', apiKey: 'k', bootstrap: V1, updates: 'off', fetch: service.fetch }));
    client.track('purchase', { targetingKey: 'u1' }, { value: 42, experimentKey: 'exp', currency: 'EUR' });
    await providers[0].onClose();
    expect(service.sent[0]).toMatchObject({
      path: '/tracking/batch',
      body: { events: [{ event_type: 'purchase', user_id: 'u1', experiment_key: 'exp', value: 42, metadata: { currency: 'EUR' } }] },
    });
  });
});
