import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Uplift, type UpliftEvent } from '../../sdk/src/index.js';
import { openStream } from '../helpers/sse-stream.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
let sdkKey: Record<string, string>;
let base: string;

const listen = async (app: FastifyInstance) => {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
};

const createFlag = async (body: Record<string, unknown> = {}) => {
  const res = await t.inject({ method: 'POST', url: '/api/v1/feature-flags', headers: dev.headers, payload: { key: t.unique('flag'), name: 'f', is_active: true, rollout_percentage: 100, ...body } });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; key: string };
};
const currentEtag = async () => (await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: sdkKey })).headers.etag as string;

beforeAll(async () => {
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
  sdkKey = (await t.apiKey(dev, ['sdk:ruleset'])).headers;
  base = await listen(t.app);
});
afterAll(() => t.close());

describe('GET /api/v1/sdk/ruleset/stream', () => {
  it('needs an API key with the sdk:ruleset scope', async () => {
    expect((await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset/stream' })).statusCode).toBe(401);
    const plain = (await t.apiKey(dev)).headers;
    const res = await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset/stream', headers: plain });
    expect(res.statusCode).toBe(403);
  });

  it('sends the ruleset on connect, then a new version after each committed flag change', async () => {
    await createFlag();
    const stream = await openStream(`${base}/api/v1/sdk/ruleset/stream`, sdkKey);
    expect(stream.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const first = await stream.next((e) => e.event === 'ruleset');
    const etag = await currentEtag();
    expect(first.id).toBe(etag.slice(1, -1));
    const download = (await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: sdkKey })).json();
    expect(JSON.parse(first.data)).toEqual({ version: first.id, heartbeat_seconds: 15, ruleset: download });

    const flag = await createFlag({ is_active: false });
    const added = await stream.next((e) => e.event === 'ruleset' && JSON.parse(e.data).ruleset.flags.some((f: { key: string }) => f.key === flag.key));
    expect(added.id).toBe((await currentEtag()).slice(1, -1));
    await t.inject({ method: 'POST', url: `/api/v1/feature-flags/${flag.id}/activate`, headers: dev.headers });
    const activated = await stream.next((e) => e.event === 'ruleset' && JSON.parse(e.data).ruleset.flags.some((f: { key: string; is_active: boolean }) => f.key === flag.key && f.is_active));
    expect(activated.id).not.toBe(added.id);
    stream.close();
  });

  it('answers a client holding the current version (Last-Event-ID) with the version only', async () => {
    const version = (await currentEtag()).slice(1, -1);
    const stream = await openStream(`${base}/api/v1/sdk/ruleset/stream`, { ...sdkKey, 'last-event-id': version });
    const first = await stream.next(() => true);
    expect(first).toEqual({ event: 'version', id: version, data: JSON.stringify({ version, heartbeat_seconds: 15 }) });
    stream.close();
  });

  it('sends heartbeats', async () => {
    const other = await t.spawn({ SDK_STREAM_HEARTBEAT_SECONDS: '1' });
    const stream = await openStream(`${await listen(other.app)}/api/v1/sdk/ruleset/stream`, sdkKey);
    expect(JSON.parse((await stream.next(() => true)).data).heartbeat_seconds).toBe(1);
    await stream.comment('heartbeat');
    stream.close();
  });

  it.runIf(process.env.TEST_REDIS_URL || process.env.TEST_DATABASE_URL)('reaches streams of every API process', async () => {
    const other = await t.spawn();
    const stream = await openStream(`${await listen(other.app)}/api/v1/sdk/ruleset/stream`, sdkKey);
    await stream.next(() => true);
    const flag = await createFlag();
    await stream.next((e) => e.event === 'ruleset' && e.data.includes(JSON.stringify(flag.key)));
    stream.close();
  });

  it('is documented as beta', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.paths['/api/v1/sdk/ruleset/stream'].get).toMatchObject({ 'x-stability': 'beta', operationId: 'streamSdkRuleset' });
  });
});

describe('@uplift/sdk against the service', () => {
  it('follows a flag changed through the API over the stream, evaluating locally', async () => {
    const flag = await createFlag({
      targeting_rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'plan', operator: 'equals', value: 'pro' }] }] },
    });
    const client = new Uplift({ baseUrl: base, apiKey: sdkKey['x-api-key'] });
    await client.ready();
    expect(client.evaluate(flag.key, 'u1', { plan: 'pro' })).toEqual({ enabled: true, reason: 'targeting_match', rule: 'plan equals pro' });
    expect(client.isEnabled(flag.key, 'u1', { plan: 'free' })).toBe(false);

    const changed = new Promise<UpliftEvent>((resolve) => client.subscribe((e) => e.type === 'ruleset' && e.changed.includes(flag.key) && resolve(e)));
    const res = await t.inject({ method: 'POST', url: `/api/v1/feature-flags/${flag.id}/deactivate`, headers: dev.headers });
    expect(res.statusCode).toBe(200);
    await changed;
    expect(client.evaluate(flag.key, 'u1', { plan: 'pro' })).toEqual({ enabled: false, reason: 'disabled' });
    expect(client.version).toBe((await currentEtag()).slice(1, -1));
    await client.close();
  });
});
