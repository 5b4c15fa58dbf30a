import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpliftApp } from '../../src/app.js';
import { experiment } from '../helpers/fixtures.js';
import { eventually, tcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

/**
 * Redis stopped and restarted under a running service, simulated by a proxy this test owns (the machine's Redis is
 * never touched). Needs TEST_REDIS_URL.
 */
const REDIS = process.env.TEST_REDIS_URL;
const track = (headers: Record<string, string>) =>
  ({ method: 'POST', url: '/api/v1/tracking/track', headers, payload: { event_type: 'view', user_id: 'u1' } }) as const;

describe.runIf(Boolean(REDIS))('Redis outage', () => {
  let t: TestApp;
  let proxy: TcpProxy;
  let a: UpliftApp;
  let admin: TestUser;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    const target = new URL(REDIS!);
    proxy = await tcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    t = await testApp({ env: { REDIS_URL: proxy.url(REDIS!) } });
    a = t.main;
    admin = await t.user({ role: 'ADMIN', superuser: true });
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await proxy.start();
    await t.close();
    await proxy.close();
  });

  it('keeps serving while Redis is down, answers 503 where Redis is the only store, and recovers when it is back', async () => {
    const e = await experiment(t, admin);
    const key = await t.apiKey(admin);
    expect((await a.app.inject({ method: 'POST', url: `/api/v1/counters/${e.id}/increment`, headers: admin.headers, payload: { counter: 'c', amount: 1 } })).statusCode).toBe(200);

    await proxy.stop();
    // A second API process starting during the outage subscribes to the bus while Redis is unreachable.
    const b = await t.spawn({ REDIS_URL: proxy.url(REDIS!) });
    for (const app of [a, b]) {
      expect((await app.app.inject({ method: 'GET', url: `/api/v1/experiments/${e.id}`, headers: admin.headers })).statusCode).toBe(200);
      expect((await app.app.inject(track(key.headers))).statusCode).toBe(200);
      const counters = await app.app.inject({ method: 'GET', url: `/api/v1/counters/${e.id}`, headers: admin.headers });
      expect(counters.statusCode).toBe(503);
      expect(Number(counters.headers['retry-after'])).toBeGreaterThan(0);
    }
    const notReady = await a.app.inject({ method: 'GET', url: '/ready' });
    expect([notReady.statusCode, notReady.json().checks.redis]).toEqual([503, 'error']);
    expect((await a.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    // b caches the key while the outage lasts.
    expect((await b.app.inject(track(key.headers))).statusCode).toBe(200);

    await proxy.start();
    await eventually(async () => expect((await a.app.inject({ method: 'GET', url: '/ready' })).json()).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } }));
    await eventually(async () => {
      const res = await a.app.inject({ method: 'GET', url: `/api/v1/counters/${e.id}`, headers: admin.headers });
      expect(res.statusCode).toBe(200);
      expect(res.json().counters).toEqual({ c: 1 });
    });
    // Once b's bus subscription (refused during the outage) is back, a key revoked through a stops working on b.
    // Messages published while the subscription was down are lost; the caches' TTL bounds what they leave stale.
    await eventually(async () => {
      const fresh = await t.apiKey(admin);
      expect((await b.app.inject(track(fresh.headers))).statusCode).toBe(200);
      expect((await a.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${fresh.id}`, headers: admin.headers })).statusCode).toBe(204);
      // Delivery to b is asynchronous: wait for it a little, then start over with a new key.
      await eventually(async () => expect((await b.app.inject(track(fresh.headers))).statusCode).toBe(401), 20);
    });
    expect(unhandled).toEqual([]);
  });
});
