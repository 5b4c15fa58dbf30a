import type { AddressInfo } from 'node:net';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import { ErrorCode, OpenFeature as ServerFeature, StandardResolutionReasons, type EvaluationContext } from '@openfeature/server-sdk';
import { ClientProviderEvents, OpenFeature as WebFeature } from '@openfeature/web-sdk';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

/**
 * The real OpenFeature clients against Uplift on a socket: the server SDK with the OFREP provider (one request per
 * evaluation), and the web SDK with the OFREP web provider (bulk evaluation, ETag revalidation, the event stream).
 * Node 20 has no EventSource, which the web provider needs for the stream: the `eventsource` package stands in for
 * the browser's.
 */
let t: TestApp;
let dev: TestUser;
let apiKey: string;
let baseUrl: string;

const opened: Array<Promise<void>> = [];
/** EventSource as the browser's, remembering when each connection opened (for the test to know the stream listens). */
class WatchedEventSource extends EventSource {
  constructor(url: string | URL) {
    super(url);
    opened.push(new Promise((resolve) => this.addEventListener('open', () => resolve(), { once: true })));
  }
}

beforeAll(async () => {
  (globalThis as { EventSource?: unknown }).EventSource = WatchedEventSource;
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
  apiKey = (await t.apiKey(dev)).key;
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await WebFeature.close();
  await ServerFeature.close();
  await t.close();
});

const rules = (attribute: string, value: string) => ({ logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute, operator: 'equals', value }] }] });

async function createFlag(body: Record<string, unknown> = {}) {
  const res = await t.inject({
    method: 'POST', url: '/api/v1/feature-flags', headers: dev.headers, payload: { key: t.unique('flag'), name: 'F', is_active: true, rollout_percentage: 100, ...body },
  });
  if (res.statusCode !== 201) throw new Error(`create flag: ${res.statusCode} ${res.body}`);
  return res.json() as { id: string; key: string };
}
const updateFlag = async (id: string, body: Record<string, unknown>) =>
  expect((await t.inject({ method: 'PUT', url: `/api/v1/feature-flags/${id}`, headers: dev.headers, payload: body })).statusCode).toBe(200);

describe('@openfeature/server-sdk with @openfeature/ofrep-provider', () => {
  let client: ReturnType<typeof ServerFeature.getClient>;
  beforeAll(async () => {
    await ServerFeature.setProviderAndWait('uplift', new OFREPProvider({ baseUrl, headers: [['X-API-Key', apiKey]] }));
    client = ServerFeature.getClient('uplift');
  });

  it('resolves boolean flags with value, variant, reason and metadata', async () => {
    const targeted = await createFlag({ targeting_rules: rules('country', 'CA') });
    const off = await createFlag({ is_active: false });
    expect(await client.getBooleanDetails(targeted.key, false, { targetingKey: 'u1', country: 'CA' })).toMatchObject({
      flagKey: targeted.key, value: true, variant: 'on', reason: 'TARGETING_MATCH', flagMetadata: { upliftReason: 'targeting_match', rule: 'country equals CA' },
    });
    expect(await client.getBooleanDetails(targeted.key, true, { targetingKey: 'u1', country: 'US' })).toMatchObject({ value: false, variant: 'off', reason: 'DEFAULT' });
    expect(await client.getBooleanDetails(off.key, true, { targetingKey: 'u1' })).toMatchObject({ value: false, variant: 'off', reason: StandardResolutionReasons.DISABLED });
    expect(await client.getBooleanValue(off.key, true)).toBe(false);
  });

  it('resolves every value type: string, number and object flags serve their variation', async () => {
    const copy = await createFlag({
      value_type: 'string', variations: [{ key: 'buy', value: 'Buy now' }, { key: 'order', value: 'Place order' }], default_variation: 'buy',
      variation_rules: [{ targeting_rules: rules('country', 'DE'), variation: 'order' }],
    });
    const limit = await createFlag({
      value_type: 'number', variations: [{ key: 'low', value: 10 }, { key: 'high', value: 2.5 }],
      variation_split: [{ variation: 'low', weight: 50 }, { variation: 'high', weight: 50 }],
    });
    const theme = await createFlag({ value_type: 'json', variations: [{ key: 'light', value: { bg: '#fff' } }, { key: 'dark', value: { bg: '#000' } }], default_variation: 'dark' });
    expect(await client.getStringDetails(copy.key, 'fallback', { targetingKey: 'u1', country: 'DE' })).toMatchObject({ value: 'Place order', variant: 'order', reason: 'TARGETING_MATCH' });
    expect(await client.getStringDetails(copy.key, 'fallback', { targetingKey: 'u1', country: 'FR' })).toMatchObject({ value: 'Buy now', variant: 'buy', reason: 'DEFAULT' });
    const split = await client.getNumberDetails(limit.key, -1, { targetingKey: 'u1' });
    expect(split).toMatchObject({ reason: 'SPLIT', value: split.variant === 'low' ? 10 : 2.5 });
    expect(await client.getObjectDetails(theme.key, {}, { targetingKey: 'u1' })).toMatchObject({ value: { bg: '#000' }, variant: 'dark', reason: 'STATIC' });
    // Off without an off variation: no value is served, the code default is used.
    await updateFlag(copy.id, { is_active: false });
    expect(await client.getStringValue(copy.key, 'code default', { targetingKey: 'u1' })).toBe('code default');
    await updateFlag(copy.id, { off_variation: 'order' });
    expect(await client.getStringDetails(copy.key, 'code default', { targetingKey: 'u1' })).toMatchObject({ value: 'Place order', variant: 'order', reason: 'DISABLED' });
    // A typed flag read as another type: the code default.
    expect(await client.getBooleanDetails(theme.key, true, { targetingKey: 'u1' })).toMatchObject({ value: true, errorCode: ErrorCode.TYPE_MISMATCH });
  });

  it('authenticates with the key as a bearer token too', async () => {
    await ServerFeature.setProviderAndWait('bearer', new OFREPProvider({ baseUrl, headers: [['Authorization', `Bearer ${apiKey}`]] }));
    const flag = await createFlag();
    expect(await ServerFeature.getClient('bearer').getBooleanDetails(flag.key, false, { targetingKey: 'u' })).toMatchObject({ value: true, reason: 'STATIC' });
  });

  it('falls back to the code default with the error code of each failure', async () => {
    const split = await createFlag({ rollout_percentage: 25 });
    const cases: Array<[string, EvaluationContext, ErrorCode]> = [
      ['no-such-flag', { targetingKey: 'u' }, ErrorCode.FLAG_NOT_FOUND],
      [split.key, {}, ErrorCode.TARGETING_KEY_MISSING],
      [split.key, { targetingKey: 'u', big: 'x'.repeat(9_000) }, ErrorCode.INVALID_CONTEXT],
    ];
    for (const [flagKey, context, errorCode] of cases) {
      expect(await client.getBooleanDetails(flagKey, true, context)).toMatchObject({ value: true, reason: StandardResolutionReasons.ERROR, errorCode });
    }
    // A boolean flag read as a string is the provider's type check: the default again.
    expect(await client.getStringDetails(split.key, 'fallback', { targetingKey: 'u' })).toMatchObject({ value: 'fallback', errorCode: ErrorCode.TYPE_MISMATCH });
    // Without a valid key: the default, never a throw.
    await ServerFeature.setProviderAndWait('nokey', new OFREPProvider({ baseUrl, headers: [['X-API-Key', 'uplk_revoked']] }));
    expect(await ServerFeature.getClient('nokey').getBooleanDetails(split.key, true, { targetingKey: 'u' })).toMatchObject({ value: true, reason: 'ERROR' });
  });

  it('sees a flag change on the next evaluation', async () => {
    const flag = await createFlag();
    expect(await client.getBooleanValue(flag.key, false, { targetingKey: 'u' })).toBe(true);
    await updateFlag(flag.id, { is_active: false });
    expect(await client.getBooleanDetails(flag.key, true, { targetingKey: 'u' })).toMatchObject({ value: false, reason: 'DISABLED' });
    await updateFlag(flag.id, { is_active: true, rollout_percentage: 0 });
    expect(await client.getBooleanDetails(flag.key, true, { targetingKey: 'u' })).toMatchObject({ value: false, reason: 'STATIC' });
  });
});

describe('@openfeature/web-sdk with @openfeature/ofrep-web-provider', () => {
  /** Every bulk answer's status, in order, and a way to wait for the next with a given status. */
  const statuses: number[] = [];
  const waiters: Array<() => void> = [];
  const observingFetch: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (new URL(input instanceof Request ? input.url : String(input)).pathname === '/ofrep/v1/evaluate/flags') {
      statuses.push(res.status);
      for (const w of waiters.splice(0)) w();
    }
    return res;
  };
  const nextStatus = async (status: number, from: number) => {
    while (!statuses.slice(from).includes(status)) await new Promise<void>((r) => waiters.push(r));
  };
  const changed = (client: ReturnType<typeof WebFeature.getClient>) =>
    new Promise<void>((resolve) => {
      const handler = () => {
        client.removeHandler(ClientProviderEvents.ConfigurationChanged, handler);
        resolve();
      };
      client.addHandler(ClientProviderEvents.ConfigurationChanged, handler);
    });

  it('loads every flag in one request, revalidates with If-None-Match (304) and takes a change from the event stream', async () => {
    const targeted = await createFlag({ targeting_rules: rules('country', 'CA') });
    const split = await createFlag({ rollout_percentage: 50 });
    const dormant = await createFlag({ is_active: false });
    const copy = await createFlag({ value_type: 'string', variations: [{ key: 'a', value: 'A' }, { key: 'b', value: 'B' }], default_variation: 'b', is_active: false });
    const provider = new OFREPWebProvider({ baseUrl, headers: [['X-API-Key', apiKey]], fetchImplementation: observingFetch });
    await WebFeature.setProviderAndWait('web', provider, { targetingKey: 'web-user', country: 'CA' });
    const client = WebFeature.getClient('web');

    // Bulk load: one request answered every flag, read locally from now on.
    expect(statuses).toEqual([200]);
    expect(client.getBooleanDetails(targeted.key, false)).toMatchObject({ value: true, variant: 'on', reason: 'TARGETING_MATCH' });
    expect(client.getBooleanDetails(split.key, false).reason).toBe('SPLIT');
    expect(client.getBooleanDetails('no-such-flag', true)).toMatchObject({ value: true, errorCode: ErrorCode.FLAG_NOT_FOUND });
    // A typed flag off without an off variation: no value in the answer, the code default (ADR 0006).
    expect(client.getStringDetails(copy.key, 'code default')).toMatchObject({ value: 'code default', reason: 'DISABLED' });
    expect(client.getStringDetails(copy.key, 'code default').errorCode).toBeUndefined();
    expect(opened).toHaveLength(1);
    await opened[0];

    // A change that does not change this user's answers: the stream asks for a re-fetch, the ETag revalidates (304).
    let from = statuses.length;
    await updateFlag(dormant.id, { rollout_percentage: 10 });
    await nextStatus(304, from);
    expect(client.getBooleanValue(targeted.key, false)).toBe(true);

    // A change that does: delivered through the stream, re-fetched (200), seen by the client.
    from = statuses.length;
    const seen = changed(client);
    await updateFlag(targeted.id, { targeting_rules: rules('country', 'US') });
    await seen;
    expect(statuses.slice(from)).toContain(200);
    expect(client.getBooleanDetails(targeted.key, true)).toMatchObject({ value: false, variant: 'off', reason: 'DEFAULT' });
    expect(opened).toHaveLength(1);

    // A typed flag turned on: its value arrives through the stream too.
    const typedSeen = changed(client);
    await updateFlag(copy.id, { is_active: true });
    await typedSeen;
    expect(client.getStringDetails(copy.key, 'code default')).toMatchObject({ value: 'B', variant: 'b', reason: 'STATIC' });
  });
});
