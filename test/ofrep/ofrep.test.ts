import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseParser, type SseEvent } from '../../sdk/src/sse.js';
import { flagSalt, inRollout, CONTEXT_TOO_DEEP_MESSAGE, CONTEXT_TOO_LARGE_MESSAGE } from '../../src/targeting/index.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
let key: { key: string; id: string; headers: Record<string, string> };

beforeAll(async () => {
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
  key = await t.apiKey(dev);
});
afterAll(() => t.close());

const rules = (...conditions: object[]) => ({ logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions }] });
const CANADA = rules({ attribute: 'country', operator: 'equals', value: 'CA' });

async function createFlag(body: Record<string, unknown> = {}) {
  const res = await t.inject({
    method: 'POST', url: '/api/v1/feature-flags', headers: dev.headers, payload: { key: t.unique('flag'), name: 'F', is_active: true, rollout_percentage: 100, ...body },
  });
  if (res.statusCode !== 201) throw new Error(`create flag: ${res.statusCode} ${res.body}`);
  return res.json() as { id: string; key: string };
}

const one = (flagKey: string, payload: unknown, headers: Record<string, string> = key.headers, app = t.app) =>
  app.inject({ method: 'POST', url: `/ofrep/v1/evaluate/flags/${flagKey}`, headers, payload: payload as object });
const bulk = (payload: unknown, headers: Record<string, string> = key.headers, app = t.app) =>
  app.inject({ method: 'POST', url: '/ofrep/v1/evaluate/flags', headers, payload: payload as object });
const nested = (levels: number): Record<string, unknown> => (levels <= 1 ? {} : { a: nested(levels - 1) });
/** A user inside (or outside) the flag's rollout of `pct` percent. */
const userFor = (flagKey: string, pct: number, inside: boolean) => {
  for (let i = 0; ; i++) if (inRollout(flagSalt(flagKey), `user-${i}`, pct) === inside) return `user-${i}`;
};

describe('POST /ofrep/v1/evaluate/flags/{key}', () => {
  it('answers value, variant, reason and metadata with the OpenFeature reason of each outcome', async () => {
    const staticOn = await createFlag();
    const staticOff = await createFlag({ rollout_percentage: 0 });
    const disabled = await createFlag({ is_active: false });
    const targeted = await createFlag({ targeting_rules: CANADA });
    const split = await createFlag({ rollout_percentage: 50 });
    const targetedSplit = await createFlag({ targeting_rules: CANADA, rollout_percentage: 50 });
    const ctx = (targetingKey: string, country = 'CA') => ({ context: { targetingKey, country } });
    const cases: Array<[string, unknown, object]> = [
      [staticOn.key, ctx('u1'), { value: true, variant: 'on', reason: 'STATIC', metadata: { upliftReason: 'rollout' } }],
      [staticOff.key, ctx('u1'), { value: false, variant: 'off', reason: 'STATIC', metadata: { upliftReason: 'rollout' } }],
      [disabled.key, ctx('u1'), { value: false, variant: 'off', reason: 'DISABLED', metadata: { upliftReason: 'disabled' } }],
      [targeted.key, ctx('u1'), { value: true, variant: 'on', reason: 'TARGETING_MATCH', metadata: { upliftReason: 'targeting_match', rule: 'country equals CA' } }],
      [targeted.key, ctx('u1', 'US'), { value: false, variant: 'off', reason: 'DEFAULT', metadata: { upliftReason: 'targeting_miss' } }],
      [split.key, ctx(userFor(split.key, 50, true)), { value: true, variant: 'on', reason: 'SPLIT', metadata: { upliftReason: 'rollout' } }],
      [split.key, ctx(userFor(split.key, 50, false)), { value: false, variant: 'off', reason: 'SPLIT', metadata: { upliftReason: 'rollout' } }],
      [targetedSplit.key, ctx(userFor(targetedSplit.key, 50, true)), { value: true, variant: 'on', reason: 'SPLIT', metadata: { upliftReason: 'targeting_match', rule: 'country equals CA' } }],
      [targetedSplit.key, ctx(userFor(targetedSplit.key, 50, false)), { value: false, variant: 'off', reason: 'SPLIT', metadata: { upliftReason: 'rollout', rule: 'country equals CA' } }],
    ];
    for (const [flagKey, payload, answer] of cases) {
      const res = await one(flagKey, payload);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.json()).toEqual({ key: flagKey, ...answer });
    }
  });

  it('answers a typed flag with the variation served, and no value when none is (the code default)', async () => {
    const flag = await createFlag({
      value_type: 'json', variations: [{ key: 'small', value: { size: 1 } }, { key: 'large', value: [1, 2] }], default_variation: 'small',
      variation_rules: [{ targeting_rules: CANADA, variation: 'large' }],
    });
    expect((await one(flag.key, { context: { targetingKey: 'u', country: 'CA' } })).json())
      .toEqual({ key: flag.key, value: [1, 2], variant: 'large', reason: 'TARGETING_MATCH', metadata: { upliftReason: 'rollout' } });
    expect((await one(flag.key, { context: { targetingKey: 'u' } })).json())
      .toEqual({ key: flag.key, value: { size: 1 }, variant: 'small', reason: 'DEFAULT', metadata: { upliftReason: 'rollout' } });
    await t.inject({ method: 'POST', url: `/api/v1/feature-flags/${flag.id}/deactivate`, headers: dev.headers });
    expect((await one(flag.key, { context: { targetingKey: 'u' } })).json()).toEqual({ key: flag.key, reason: 'DISABLED', metadata: { upliftReason: 'disabled' } });
    const item = (await bulk({ context: { targetingKey: 'u' } })).json().flags.find((f: { key: string }) => f.key === flag.key);
    expect(item).toEqual({ key: flag.key, reason: 'DISABLED', metadata: { upliftReason: 'disabled' } });
  });

  it('takes the API key as X-API-Key or as Authorization: Bearer, and is 401 without a valid one', async () => {
    const flag = await createFlag();
    expect((await one(flag.key, { context: {} }, { authorization: `Bearer ${key.key}` })).json()).toMatchObject({ value: true });
    expect((await one(flag.key, { context: {} }, {})).statusCode).toBe(401);
    expect((await one(flag.key, { context: {} }, { authorization: 'Bearer uplk_not-a-key' })).statusCode).toBe(401);
    expect((await one(flag.key, { context: {} }, { authorization: `Bearer ${dev.token}` })).statusCode).toBe(401);
    expect((await bulk({ context: {} }, {})).statusCode).toBe(401);
  });

  it('answers an unknown or archived flag 404 FLAG_NOT_FOUND', async () => {
    const archived = await createFlag();
    await t.inject({ method: 'POST', url: '/api/v1/feature-flags/bulk-toggle', headers: dev.headers, payload: { ids: [archived.id], action: 'archive' } });
    for (const flagKey of ['no-such-flag', archived.key]) {
      const res = await one(flagKey, { context: { targetingKey: 'u' } });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ key: flagKey, errorCode: 'FLAG_NOT_FOUND', errorDetails: 'Flag not found' });
    }
  });

  it('needs targetingKey only where the flag buckets users', async () => {
    const split = await createFlag({ rollout_percentage: 30 });
    const everyone = await createFlag();
    for (const payload of [{ context: {} }, { context: { targetingKey: '' } }, {}]) {
      const res = await one(split.key, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ key: split.key, errorCode: 'TARGETING_KEY_MISSING', errorDetails: 'This flag needs context.targetingKey (the user id) to be evaluated' });
      expect((await one(everyone.key, payload)).json()).toMatchObject({ value: true, reason: 'STATIC' });
    }
  });

  it('refuses a context the evaluate routes refuse, or that is not an object, with INVALID_CONTEXT', async () => {
    const flag = await createFlag();
    const cases: Array<[unknown, string]> = [
      [{ context: { targetingKey: 'u', deep: nested(10) } }, CONTEXT_TOO_DEEP_MESSAGE],
      [{ context: { targetingKey: 'u', big: 'x'.repeat(8_200) } }, CONTEXT_TOO_LARGE_MESSAGE],
      [{ context: ['u'] }, 'context must be a JSON object'],
      [{ context: { targetingKey: 42 } }, 'context.targetingKey must be a string'],
    ];
    for (const [payload, details] of cases) {
      const res = await one(flag.key, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ key: flag.key, errorCode: 'INVALID_CONTEXT', errorDetails: details });
      const all = await bulk(payload);
      expect(all.statusCode).toBe(400);
      expect(all.json()).toEqual({ errorCode: 'INVALID_CONTEXT', errorDetails: details });
    }
    // targetingKey is not part of the limited context: a context just under the limit still evaluates.
    expect((await one(flag.key, { context: { targetingKey: 'u'.repeat(200), deep: nested(9) } })).statusCode).toBe(200);
  });

  it('answers a body that is not JSON, or not an object, PARSE_ERROR', async () => {
    const flag = await createFlag();
    const details = 'The body must be a JSON object: {"context": {...}}';
    for (const payload of ['{"context": {', '[1, 2]', '"context"', '{"__proto__": {"x": 1}}', '['.repeat(600)]) {
      const headers = { ...key.headers, 'content-type': 'application/json' };
      const res = await t.inject({ method: 'POST', url: `/ofrep/v1/evaluate/flags/${flag.key}`, headers, payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ key: flag.key, errorCode: 'PARSE_ERROR', errorDetails: details });
      const all = await t.inject({ method: 'POST', url: '/ofrep/v1/evaluate/flags', headers, payload });
      expect(all.json()).toEqual({ errorCode: 'PARSE_ERROR', errorDetails: details });
    }
  });

  it('answers an evaluation error (an unusable segment) GENERAL', async () => {
    const seg = await t.inject({ method: 'POST', url: '/api/v1/segments', headers: dev.headers, payload: { name: t.unique('seg'), rules: CANADA } });
    const flag = await createFlag({ targeting_rules: rules({ attribute: 'segment', operator: 'in_segment', value: seg.json().id }) });
    // Old-format rules exist only in older data; the API cannot write them.
    await t.database.exec(`UPDATE segments SET rules = '{"match": "all"}' WHERE id = '${seg.json().id}'`);
    await t.inject({ method: 'PUT', url: `/api/v1/segments/${seg.json().id}`, headers: dev.headers, payload: { name: 'legacy' } });
    const res = await one(flag.key, { context: { targetingKey: 'u' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ key: flag.key, errorCode: 'GENERAL', errorDetails: 'The flag names a segment that cannot be evaluated' });
    const item = (await bulk({ context: { targetingKey: 'u' } })).json().flags.find((f: { key: string }) => f.key === flag.key);
    expect(item).toEqual({ key: flag.key, errorCode: 'GENERAL', errorDetails: 'The flag names a segment that cannot be evaluated' });
  });
});

describe('POST /ofrep/v1/evaluate/flags', () => {
  it('answers every flag that is not archived, each as the single route does, and an event stream', async () => {
    const on = await createFlag({ targeting_rules: CANADA });
    const split = await createFlag({ rollout_percentage: 40 });
    const archived = await createFlag();
    await t.inject({ method: 'POST', url: '/api/v1/feature-flags/bulk-toggle', headers: dev.headers, payload: { ids: [archived.id], action: 'archive' } });
    const res = await bulk({ context: { targetingKey: 'u7', country: 'CA' } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const byKey = new Map(body.flags.map((f: { key: string }) => [f.key, f]));
    expect(byKey.get(on.key)).toEqual({ key: on.key, value: true, variant: 'on', reason: 'TARGETING_MATCH', metadata: { upliftReason: 'targeting_match' } });
    const single = (await one(split.key, { context: { targetingKey: 'u7', country: 'CA' } })).json();
    expect(byKey.get(split.key)).toEqual(single);
    expect(byKey.has(archived.key)).toBe(false);
    expect(body.eventStreams).toEqual([{ type: 'sse', endpoint: { requestUri: expect.stringMatching(/^\/ofrep\/v1\/event-stream\?token=[\w-]+\.[\w-]+\.[\w-]+$/) } }]);
    expect(body.eventStreams[0].endpoint.requestUri).not.toContain(key.key);
    // Without targetingKey, only the flags that bucket users fail.
    const anonymous = new Map((await bulk({ context: { country: 'CA' } })).json().flags.map((f: { key: string }) => [f.key, f]));
    expect(anonymous.get(split.key)).toEqual({ key: split.key, errorCode: 'TARGETING_KEY_MISSING', errorDetails: 'This flag needs context.targetingKey (the user id) to be evaluated' });
    expect(anonymous.get(on.key)).toMatchObject({ value: true });
  });

  it('sends an ETag and answers If-None-Match 304 without a body while the answer for that context is the same', async () => {
    const flag = await createFlag({ targeting_rules: CANADA });
    const payload = { context: { targetingKey: 'etag-user', country: 'US' } };
    const first = await bulk(payload);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await bulk(payload, { ...key.headers, 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);
    // SSE-triggered re-fetches carry the event's metadata as query parameters (ADR 0008).
    const withMetadata = await t.inject({ method: 'POST', url: '/ofrep/v1/evaluate/flags?flagConfigEtag=abc&flagConfigLastModified=1771622898', headers: { ...key.headers, 'if-none-match': etag }, payload });
    expect(withMetadata.statusCode).toBe(304);
    // Another context has another answer.
    expect((await bulk({ context: { targetingKey: 'etag-user', country: 'CA' } }, { ...key.headers, 'if-none-match': etag })).statusCode).toBe(200);
    // A change of what this context is answered: 200 with a new ETag.
    await t.inject({ method: 'PUT', url: `/api/v1/feature-flags/${flag.id}`, headers: dev.headers, payload: { targeting_rules: rules({ attribute: 'country', operator: 'equals', value: 'US' }) } });
    const changed = await bulk(payload, { ...key.headers, 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.json().flags.find((f: { key: string }) => f.key === flag.key)).toMatchObject({ value: true, reason: 'TARGETING_MATCH' });
  });

  it('is limited as the SDK routes are: 429 with Retry-After', async () => {
    const limited = await t.spawn({ RATE_LIMIT_ENABLED: 'true', SDK_RATE_LIMIT_PER_MINUTE: '2' });
    const flag = await createFlag();
    for (let i = 0; i < 2; i++) expect((await one(flag.key, { context: {} }, key.headers, limited.app)).statusCode).toBe(200);
    const refused = await one(flag.key, { context: {} }, key.headers, limited.app);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    for (let i = 0; i < 2; i++) expect((await bulk({ context: {} }, key.headers, limited.app)).statusCode).toBe(200);
    expect((await bulk({ context: {} }, key.headers, limited.app)).statusCode).toBe(429);
  });

  it('gives CORS to listed origins, allowing the Authorization header and exposing ETag', async () => {
    const origin = 'https://shop.example.com';
    const cors = await t.spawn({ CORS_ORIGINS: origin });
    const preflight = await cors.app.inject({
      method: 'OPTIONS', url: '/ofrep/v1/evaluate/flags',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, if-none-match' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': origin,
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': 'X-API-Key, Content-Type, If-None-Match, Last-Event-ID, X-Request-ID, Authorization',
    });
    const res = await bulk({ context: {} }, { ...key.headers, origin }, cors.app);
    expect(res.headers).toMatchObject({ 'access-control-allow-origin': origin, 'access-control-expose-headers': 'ETag, Retry-After, X-Request-ID' });
    const uri = res.json().eventStreams[0].endpoint.requestUri as string;
    expect((await cors.app.inject({ method: 'OPTIONS', url: uri, headers: { origin, 'access-control-request-method': 'GET' } })).statusCode).toBe(204);
    expect((await cors.app.inject({ method: 'GET', url: '/ofrep/v1/event-stream?token=forged', headers: { origin } })).headers['access-control-allow-origin']).toBe(origin);
  });

  it('is documented as beta in the OpenAPI document, with both ways to send the key', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.paths['/ofrep/v1/evaluate/flags'].post).toMatchObject({ 'x-stability': 'beta', operationId: 'ofrepEvaluateFlags', security: [{ apiKey: [] }, { bearer: [] }] });
    expect(doc.paths['/ofrep/v1/evaluate/flags/{key}'].post).toMatchObject({ 'x-stability': 'beta', operationId: 'ofrepEvaluateFlag' });
    expect(doc.paths['/ofrep/v1/event-stream'].get).toMatchObject({ 'x-stability': 'beta', operationId: 'ofrepEventStream' });
  });
});

const listen = async (app: FastifyInstance) => {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
};

/** A stream read through fetch: its events in arrival order; `next` waits for one matching; `ended` for its end. */
async function openStream(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  const events: SseEvent[] = [];
  const waiters: Array<() => void> = [];
  const parser = new SseParser((e) => events.push(e));
  const decoder = new TextDecoder();
  let done = false;
  void (async () => {
    const reader = res.body!.getReader();
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (chunk.done) done = true;
      else parser.push(decoder.decode(chunk.value, { stream: true }));
      for (const w of waiters.splice(0)) w();
      if (done) return;
    }
  })();
  const until = async (check: () => boolean) => {
    while (!check()) await new Promise<void>((r) => waiters.push(r));
  };
  return {
    res,
    next: async (match: (e: SseEvent) => boolean) => {
      await until(() => events.some(match) || done);
      return events.find(match);
    },
    ended: () => until(() => done),
    close: () => res.body?.cancel().catch(() => undefined),
  };
}

describe('GET /ofrep/v1/event-stream', () => {
  let base: string;
  beforeAll(async () => {
    base = await listen(t.app);
  });
  const streamUrl = async (headers = key.headers, at = base) => `${at}${(await bulk({ context: {} }, headers)).json().eventStreams[0].endpoint.requestUri}`;
  const isRefetch = (e: SseEvent) => e.event === 'message' && e.data !== '' && JSON.parse(e.data).type === 'refetchEvaluation';

  it('sends refetchEvaluation after a committed flag change', async () => {
    const stream = await openStream(await streamUrl());
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    await createFlag();
    const event = (await stream.next(isRefetch))!;
    expect(JSON.parse(event.data)).toEqual({ type: 'refetchEvaluation', etag: event.id });
    stream.close();
  });

  it('refuses a forged, altered or missing token with 401, and a token never is the API key', async () => {
    const url = await streamUrl();
    const token = new URL(url).searchParams.get('token')!;
    for (const bad of ['forged', `${token.slice(0, -2)}xx`, key.key]) {
      const res = await t.inject({ method: 'GET', url: `/ofrep/v1/event-stream?token=${encodeURIComponent(bad)}` });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ detail: 'Invalid or expired event stream token' });
    }
    expect((await t.inject({ method: 'GET', url: '/ofrep/v1/event-stream' })).statusCode).toBe(422);
  });

  it('ends when the API key that asked for it is deleted, and its URL no longer opens', async () => {
    const doomed = await t.apiKey(dev);
    const url = await streamUrl(doomed.headers);
    const stream = await openStream(url);
    expect(stream.res.status).toBe(200);
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/api-keys/${doomed.id}`, headers: dev.headers })).statusCode).toBe(204);
    await stream.ended();
    expect((await fetch(url)).status).toBe(401);
  });

  it('tells a client reconnecting with an old Last-Event-ID to refetch at once', async () => {
    const stream = await openStream(await streamUrl(), { 'last-event-id': 'an-old-version' });
    expect(await stream.next(isRefetch)).toBeDefined();
    stream.close();
  });

  it.runIf(process.env.TEST_REDIS_URL || process.env.TEST_DATABASE_URL)('reaches streams of every API process', async () => {
    const other = await t.spawn();
    const stream = await openStream(await streamUrl(key.headers, await listen(other.app)));
    await createFlag();
    expect(await stream.next(isRefetch)).toBeDefined();
    stream.close();
  });
});
