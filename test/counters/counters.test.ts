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

