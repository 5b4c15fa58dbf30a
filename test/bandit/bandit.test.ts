import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { experiment } from '../helpers/fixtures.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
let admin: TestUser;
let viewer: TestUser;
beforeAll(async () => {
  t = await testApp();
  [dev, admin, viewer] = await t.users('DEVELOPER', 'ADMIN', 'VIEWER');
});
afterAll(() => t.close());

const GHOST = '00000000-0000-4000-8000-00000000c0de';

describe('bandit', () => {
  const key = async () => (await t.apiKey(dev)).headers;

  it('starts from the traffic allocation, learns from conversions by Thompson sampling, and routes new users by weight', async () => {
    const e = await experiment(t, dev, { type: 'bandit' });
    const [control, treatment] = [e.variants.find((v) => v.is_control)!, e.variants.find((v) => !v.is_control)!];
    const initial = await t.inject({ method: 'GET', url: `/api/v1/bandit/${e.id}`, headers: viewer.headers });
    expect(initial.statusCode).toBe(200);
    expect(initial.json()).toMatchObject({ experiment_id: e.id, source: 'initial', engine_version: '1.4.0', weights: { [control.id]: 0.5, [treatment.id]: 0.5 } });

    const headers = await key();
    for (let i = 0; i < 60; i++) {
      const a = (await t.inject({ method: 'POST', url: '/api/v1/tracking/assign', headers, payload: { experiment_key: e.key, user_id: `bu-${i}` } })).json();
      // The treatment converts far more often than the control.
      const converts = a.variant_id === treatment.id ? i % 10 < 8 : i % 10 < 1;
      if (converts) await t.inject({ method: 'POST', url: '/api/v1/tracking/track', headers, payload: { event_type: 'purchase', user_id: `bu-${i}`, experiment_key: e.key } });
    }
    expect((await t.inject({ method: 'POST', url: `/api/v1/bandit/${e.id}/update`, headers: viewer.headers })).statusCode).toBe(403);
    const updated = await t.inject({ method: 'POST', url: `/api/v1/bandit/${e.id}/update`, headers: dev.headers });
    expect(updated.statusCode).toBe(200);
    const body = updated.json();
    expect(body.source).toBe('thompson');
    expect(body.weights[treatment.id]).toBeGreaterThan(0.9);
    expect(body.weights[control.id]).toBeGreaterThanOrEqual(body.exploration_floor - 1e-12);
    expect(body.weights[control.id] + body.weights[treatment.id]).toBeCloseTo(1, 9);
    expect(body.arms.reduce((n: number, a: { pulls: number }) => n + a.pulls, 0)).toBe(60);

    let treated = 0;
    for (let i = 0; i < 40; i++) {
      const a = (await t.inject({ method: 'POST', url: '/api/v1/tracking/assign', headers, payload: { experiment_key: e.key, user_id: `new-${i}` } })).json();
      if (a.variant_id === treatment.id) treated++;
    }
    expect(treated).toBeGreaterThan(30);
  });

  it('lets an ADMIN override the weights, which must cover every variant and sum to 1', async () => {
    const e = await experiment(t, dev, { type: 'bandit' });
    const [a, b] = e.variants;
    const url = `/api/v1/bandit/${e.id}/weights`;
    expect((await t.inject({ method: 'PUT', url, headers: dev.headers, payload: { weights: { [a.id]: 1, [b.id]: 0 } } })).statusCode).toBe(403);
    const bad = await t.inject({ method: 'PUT', url, headers: admin.headers, payload: { weights: { [a.id]: 0.5, [b.id]: 0.4 } } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'weights']);
    expect((await t.inject({ method: 'PUT', url, headers: admin.headers, payload: { weights: { [a.id]: 1 } } })).statusCode).toBe(422);
    const ok = await t.inject({ method: 'PUT', url, headers: admin.headers, payload: { weights: { [a.id]: 0, [b.id]: 1 } } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ source: 'manual', weights: { [a.id]: 0, [b.id]: 1 } });
    const headers = await key();
    for (let i = 0; i < 10; i++) {
      const res = await t.inject({ method: 'POST', url: '/api/v1/tracking/assign', headers, payload: { experiment_key: e.key, user_id: `w-${i}` } });
      expect(res.json().variant_id).toBe(b.id);
    }
  });

  it('refuses non-bandit experiments (400) and unknown ones (404)', async () => {
    const e = await experiment(t, dev);
    const res = await t.inject({ method: 'GET', url: `/api/v1/bandit/${e.id}`, headers: dev.headers });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: 'This experiment is not a bandit experiment' });
    expect((await t.inject({ method: 'GET', url: `/api/v1/bandit/${GHOST}`, headers: dev.headers })).statusCode).toBe(404);
    expect((await t.inject({ method: 'GET', url: `/api/v1/bandit/${e.id}` })).statusCode).toBe(401);
  });
});
