import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { isInHoldout } from '../../src/modules/holdout/membership.js';
import { ANOTHER_HOLDOUT_ACTIVE, HOLDOUT_NOT_FOUND, RESULTS_NOTICE } from '../../src/modules/holdout/service.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { fisherExactTwoSided } from '../../src/stats/index.js';

const clock = fixedClock(new Date('2031-09-01T10:00:00.000Z'));
let t: TestApp;
let admin: TestUser;
let dev: TestUser;
let analyst: TestUser;
let viewer: TestUser;

beforeAll(async () => {
  t = await testApp({ clock });
  [admin, dev, analyst, viewer] = await t.users('ADMIN', 'DEVELOPER', 'ANALYST', 'VIEWER');
});
afterAll(() => t.close());

type Json = Record<string, any>;
const call: TestApp['call'] = (...args) => t.call(...args);

describe('global holdout', () => {
  const HOLDOUT = '/api/v1/holdout';

  it('has one active holdout at a time, managed by ADMIN', async () => {
    const none = await call('GET', HOLDOUT, viewer);
    expect(none.statusCode).toBe(200);
    expect(none.json()).toBeNull();
    expect((await call('GET', `${HOLDOUT}/check/someone`, viewer)).json()).toEqual({ user_id: 'someone', in_holdout: false, holdout_id: null, percentage: null });

    expect((await call('POST', HOLDOUT, dev, { name: 'h', percentage: 5 })).statusCode).toBe(403);
    expect((await call('POST', HOLDOUT, undefined, { name: 'h', percentage: 5 })).statusCode).toBe(401);
    expect((await call('POST', HOLDOUT, admin, { name: 'h', percentage: 101 })).statusCode).toBe(422);
    expect((await call('POST', HOLDOUT, admin, { name: 'h', percentage: 5, extra: true })).statusCode).toBe(422);
    const first = await call('POST', HOLDOUT, admin, { name: 'Global 5%', percentage: 5 });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ name: 'Global 5%', percentage: 5, is_active: true, description: null });
    expect((await call('GET', HOLDOUT, viewer)).json()).toEqual(first.json());

    const second = await call('POST', HOLDOUT, admin, { name: 'Second', percentage: 10 });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toEqual({ detail: ANOTHER_HOLDOUT_ACTIVE });
    const spare = await call('POST', HOLDOUT, admin, { name: 'Spare', percentage: 10, is_active: false });
    expect(spare.statusCode).toBe(201);
    const all = await call('GET', `${HOLDOUT}/all`, admin);
    expect(all.json().map((h: Json) => h.name)).toEqual(expect.arrayContaining(['Global 5%', 'Spare']));
    expect(all.json().map((h: Json) => h.name)).not.toContain('Second');
    expect((await call('GET', `${HOLDOUT}/all`, dev)).statusCode).toBe(403);

    const activate = await call('PUT', `${HOLDOUT}/${spare.json().id}`, admin, { is_active: true });
    expect(activate.statusCode).toBe(409);
    expect((await call('PUT', `${HOLDOUT}/${first.json().id}`, dev, { is_active: false })).statusCode).toBe(403);
    expect((await call('PUT', `${HOLDOUT}/${first.json().id}`, admin, { is_active: false })).json().is_active).toBe(false);
    const switched = await call('PUT', `${HOLDOUT}/${spare.json().id}`, admin, { is_active: true, percentage: 100 });
    expect(switched.json()).toMatchObject({ is_active: true, percentage: 100 });
    expect((await call('GET', HOLDOUT, viewer)).json().id).toBe(spare.json().id);
    expect((await call('PUT', `${HOLDOUT}/00000000-0000-4000-8000-000000000000`, admin, { percentage: 1 })).json()).toEqual({ detail: HOLDOUT_NOT_FOUND });
    expect((await call('PUT', `${HOLDOUT}/zzz`, admin, { percentage: 1 })).statusCode).toBe(422);
  });

  it('checks users deterministically by hash against the active holdout', async () => {
    const active = (await call('GET', HOLDOUT, viewer)).json();
    await call('PUT', `${HOLDOUT}/${active.id}`, admin, { percentage: 50 });
    for (const user of ['alice', 'bob', 'carol', 'dave', 'user:42']) {
      const res = await call('GET', `${HOLDOUT}/check/${encodeURIComponent(user)}`, viewer);
      expect(res.json()).toEqual({ user_id: user, in_holdout: isInHoldout({ id: active.id, percentage: 50 }, user), holdout_id: active.id, percentage: 50 });
    }
    expect((await call('GET', `${HOLDOUT}/check/alice`)).statusCode).toBe(401);
  });

  it('answers beta results: held-out users against everyone else, per tracked event', async () => {
    const active = (await call('GET', HOLDOUT, viewer)).json();
    const key = (await t.apiKey(dev)).headers;
    const users = Array.from({ length: 40 }, (_, i) => `hr-${i}`);
    for (const [i, user] of users.entries()) {
      const event = i % 3 === 0 ? 'signup' : 'page_view';
      await t.inject({ method: 'POST', url: '/api/v1/tracking/track', headers: key, payload: { event_type: event, user_id: user } });
    }
    const res = await call('GET', `${HOLDOUT}/${active.id}/results`, analyst);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const held = users.filter((u) => isInHoldout(active, u));
    expect(body).toMatchObject({ holdout: active, analysis_status: 'beta', analysis_notice: RESULTS_NOTICE, users_in_holdout: held.length });
    const signup = body.metrics.find((m: Json) => m.event_name === 'signup');
    const heldSignups = users.filter((u, i) => i % 3 === 0 && held.includes(u)).length;
    const exposedSignups = users.filter((u, i) => i % 3 === 0 && !held.includes(u)).length;
    const exposed = users.length - held.length;
    expect(signup).toEqual({
      event_name: 'signup',
      holdout_users: held.length, holdout_converters: heldSignups, holdout_rate: heldSignups / held.length,
      exposed_users: exposed, exposed_converters: exposedSignups, exposed_rate: exposedSignups / exposed,
      relative_lift: heldSignups ? (exposedSignups / exposed - heldSignups / held.length) / (heldSignups / held.length) : null,
      p_value: fisherExactTwoSided(heldSignups, held.length, exposedSignups, exposed),
    });
    expect((await call('GET', `${HOLDOUT}/00000000-0000-4000-8000-000000000000/results`, viewer)).statusCode).toBe(404);
    const doc = (await call('GET', '/api/v1/openapi.json')).json();
    expect(doc.paths['/api/v1/holdout/{holdout_id}/results'].get['x-stability']).toBe('beta');
  });
});
