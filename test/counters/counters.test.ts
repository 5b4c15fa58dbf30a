import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { experiment } from '../helpers/fixtures.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
let admin: TestUser;
let viewer: TestUser;
beforeAll(async () => {
  t = await testApp();
  [dev, admin, viewer] = await Promise.all([t.user({ role: 'DEVELOPER' }), t.user({ role: 'ADMIN' }), t.user()]);
});
afterAll(() => t.close());

const GHOST = '00000000-0000-4000-8000-00000000c0de';

describe('counters', () => {
  it('counts per experiment and counter name, reads with every role, resets for ADMIN only', async () => {
    const e = await experiment(t, dev, { start: false });
    const url = `/api/v1/counters/${e.id}`;
    expect((await t.inject({ method: 'GET', url, headers: viewer.headers })).json()).toEqual({ experiment_id: e.id, counters: {}, total: 0 });
    const inc = await t.inject({ method: 'POST', url: `${url}/increment`, headers: dev.headers, payload: { counter: 'clicks', amount: 3 } });
    expect(inc.statusCode).toBe(200);
    await t.inject({ method: 'POST', url: `${url}/increment`, headers: dev.headers, payload: {} });
    expect((await t.inject({ method: 'GET', url, headers: viewer.headers })).json()).toEqual({ experiment_id: e.id, counters: { clicks: 3, events: 1 }, total: 4 });
    expect((await t.inject({ method: 'POST', url: `${url}/increment`, headers: viewer.headers, payload: {} })).statusCode).toBe(403);
    expect((await t.inject({ method: 'POST', url: `${url}/reset`, headers: dev.headers })).statusCode).toBe(403);
    const reset = await t.inject({ method: 'POST', url: `${url}/reset`, headers: admin.headers });
    expect(reset.json()).toEqual({ experiment_id: e.id, counters: {}, total: 0 });
    expect((await t.inject({ method: 'GET', url })).statusCode).toBe(401);
  });

  it('answers 400 when the body names another experiment than the path, changing nothing', async () => {
    const e = await experiment(t, dev, { start: false });
    const other = await experiment(t, dev, { start: false });
    const res = await t.inject({ method: 'POST', url: `/api/v1/counters/${e.id}/increment`, headers: dev.headers, payload: { experiment_id: other.id } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: 'experiment_id in the body does not match the experiment_id in the path' });
    expect((await t.inject({ method: 'GET', url: `/api/v1/counters/${e.id}`, headers: dev.headers })).json().total).toBe(0);
    const same = await t.inject({ method: 'POST', url: `/api/v1/counters/${e.id}/increment`, headers: dev.headers, payload: { experiment_id: e.id } });
    expect(same.json().total).toBe(1);
  });

  it('bulk: up to 100 increments each naming its experiment; an unknown experiment refuses the whole request', async () => {
    const a = await experiment(t, dev, { start: false });
    const b = await experiment(t, dev, { start: false });
    const res = await t.inject({
      method: 'POST', url: '/api/v1/counters/bulk', headers: dev.headers,
      payload: { increments: [{ experiment_id: a.id, counter: 'x' }, { experiment_id: b.id, amount: 5 }, { experiment_id: a.id, counter: 'x', amount: 2 }] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([
      { experiment_id: a.id, counter: 'x', value: 1 },
      { experiment_id: b.id, counter: 'events', value: 5 },
      { experiment_id: a.id, counter: 'x', value: 3 },
    ]);
    const unknown = await t.inject({ method: 'POST', url: '/api/v1/counters/bulk', headers: dev.headers, payload: { increments: [{ experiment_id: a.id }, { experiment_id: GHOST }] } });
    expect(unknown.statusCode).toBe(404);
    expect((await t.inject({ method: 'GET', url: `/api/v1/counters/${a.id}`, headers: dev.headers })).json().counters).toEqual({ x: 3 });
    const tooMany = Array.from({ length: 101 }, () => ({ experiment_id: a.id }));
    expect((await t.inject({ method: 'POST', url: '/api/v1/counters/bulk', headers: dev.headers, payload: { increments: tooMany } })).statusCode).toBe(422);
  });

  it('404 for unknown experiments and 422 for bad ids and amounts', async () => {
    expect((await t.inject({ method: 'GET', url: `/api/v1/counters/${GHOST}`, headers: dev.headers })).json()).toEqual({ detail: 'Experiment not found' });
    expect((await t.inject({ method: 'GET', url: '/api/v1/counters/abc', headers: dev.headers })).statusCode).toBe(422);
    const e = await experiment(t, dev, { start: false });
    expect((await t.inject({ method: 'POST', url: `/api/v1/counters/${e.id}/increment`, headers: dev.headers, payload: { amount: 0 } })).statusCode).toBe(422);
  });
});

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
