import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { fixedClock } from '../../src/platform/clock.js';
import { experimentSalt, pickWeighted } from '../../src/targeting/index.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { Driver, type Json } from './helpers.js';

const clock = fixedClock(new Date('2031-05-04T12:00:00.000Z'));
const MINUTE = 60_000;
let t: TestApp;
let dev: TestUser;
let analyst: TestUser;
let d: Driver;
let key: Record<string, string>;

beforeAll(async () => {
  t = await testApp({ clock, env: { ACCESS_TOKEN_EXPIRE_MINUTES: '525600' } });
  [dev, analyst] = await Promise.all([t.user({ role: 'DEVELOPER' }), t.user({ role: 'ANALYST' })]);
  key = (await t.apiKey(dev, ['sdk:ruleset'])).headers;
  d = new Driver(t, dev, key);
});
afterAll(() => t.close());

/** `n` user ids that the experiment's hashing sends to variant `index` (allocations as created). */
function usersLandingIn(e: Json, index: number, n: number, prefix: string): string[] {
  const weights = e.variants.map((v: Json) => v.traffic_allocation);
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) {
    const user = `${prefix}-${i}`;
    if (pickWeighted(experimentSalt(e.key), user, weights) === index) out.push(user);
  }
  return out;
}

/** Balanced traffic in US, and 300 extra users in DE who all land in the control: an SRM located in DE. */
async function skewedExperiment(): Promise<Json> {
  const e = await d.experiment();
  const us = Array.from({ length: 400 }, (_, i) => `us-${e.key}-${i}`);
  await d.assign(e.key, us, () => ({ country: 'US', platform: 'web' }));
  await d.assign(e.key, usersLandingIn(e, 0, 300, `de-${e.key}`), () => ({ country: 'DE', platform: 'web' }));
  // An id-like attribute: more distinct values than the diagnosis keeps.
  await d.assign(e.key, Array.from({ length: 120 }, (_, i) => `id-${e.key}-${i}`), (u) => ({ country: 'US', session: u }));
  return e;
}

describe('SRM diagnosis', () => {
  it('names the context values that carry a mismatch, on the tail and on the rollup alike', async () => {
    const e = await skewedExperiment();
    const fromTail = await d.get(`/api/v1/results/${e.id}`);
    expect(fromTail.srm.warning).toBe(true);
    expect(fromTail.srm.sequential).toMatchObject({ method: 'dirichlet_multinomial_mixture', warning: true, looks: 1 });
    expect(fromTail.srm.sequential.p_value).toBeLessThan(0.001);
    const diagnosis = fromTail.srm.diagnosis;
    expect(diagnosis.worst[0]).toMatchObject({ attribute: 'country', value: 'DE', users: 300, warning: true });
    expect(diagnosis.worst[0].variants.map((v: Json) => v.observed)).toEqual([300, 0]);
    expect(diagnosis.dimensions.find((x: Json) => x.attribute === 'country')).toMatchObject({ warning: true, worst_value: 'DE', values_tested: 2 });
    expect(diagnosis.value_limit).toBe(100);
    expect(diagnosis.dimensions.map((x: Json) => x.attribute)).not.toContain('session');
    expect(fromTail.srm.auto_pause).toBe(false);

    clock.advance(2 * MINUTE);
    await t.services.results.refreshActive();
    const rolledUp = await d.get(`/api/v1/results/${e.id}?use_cache=false`);
    expect(rolledUp.srm.diagnosis).toEqual(diagnosis);
    expect(rolledUp.srm.diagnosis.attributes_over_limit).toEqual(['session']);
  });

  it('alerts a sequential SRM once from the rollup job, and pauses an experiment that opted in (audited)', async () => {
    const notify = vi.spyOn(t.services.notifications, 'notify');
    const quiet = await skewedExperiment();
    const paused = await skewedExperiment();
    const url = `/api/v1/results/${paused.id}/srm-settings`;
    expect((await t.inject({ method: 'PUT', url, headers: analyst.headers, payload: { auto_pause: true } })).statusCode).toBe(403);
    expect((await t.inject({ method: 'PUT', url, headers: dev.headers, payload: { auto_pause: 'yes' } })).statusCode).toBe(422);
    expect((await t.inject({ method: 'PUT', url: '/api/v1/results/00000000-0000-4000-8000-000000000000/srm-settings', headers: dev.headers, payload: { auto_pause: true } })).statusCode).toBe(404);
    const put = await t.inject({ method: 'PUT', url, headers: dev.headers, payload: { auto_pause: true } });
    expect(put.json()).toMatchObject({ experiment_id: paused.id, auto_pause: true, alerted_at: null, auto_paused_at: null });
    expect((await d.get(`/api/v1/results/${paused.id}`)).srm.auto_pause).toBe(true);

    // Reads alert nobody and pause nothing.
    await d.get(`/api/v1/results/${quiet.id}`);
    expect(notify).not.toHaveBeenCalledWith('srm_detected', expect.anything());
    expect((await d.get(`/api/v1/experiments/${paused.id}`)).status).toBe('active');

    await t.services.results.refreshActive();
    const srmCalls = () => notify.mock.calls.filter(([kind]) => kind === 'srm_detected').map(([, p]) => p as Json);
    expect(srmCalls()).toEqual(expect.arrayContaining([
      expect.objectContaining({ experiment_id: quiet.id, auto_paused: false }),
      expect.objectContaining({ experiment_id: paused.id, auto_paused: true }),
    ]));
    expect((await d.get(`/api/v1/experiments/${paused.id}`)).status).toBe('paused');
    expect((await d.get(`/api/v1/experiments/${quiet.id}`)).status).toBe('active');
    const settings = await d.get(url);
    expect(settings.auto_paused_at).toBe(clock.now().toISOString());
    expect(settings.alerted_at).toBe(clock.now().toISOString());
    const audit = await d.get(`/api/v1/audit-logs/?entity_id=${paused.id}&action=experiment_srm_auto_pause`, analyst);
    expect(audit.items).toHaveLength(1);
    expect(audit.items[0].details).toMatchObject({ reason: 'sample_ratio_mismatch', test: 'dirichlet_multinomial_mixture' });

    // Once per experiment: the next runs neither alert again nor pause again after a person resumes it.
    await t.inject({ method: 'POST', url: `/api/v1/experiments/${paused.id}/start`, headers: dev.headers });
    const before = srmCalls().length;
    await t.services.results.refreshActive();
    expect(srmCalls()).toHaveLength(before);
    expect((await d.get(`/api/v1/experiments/${paused.id}`)).status).toBe('active');
    notify.mockRestore();
  });
});

describe('exposure consistency', () => {
  it('excludes users tracked with another variant from every metric and counts them in diagnostics', async () => {
    const e = await d.experiment();
    const [control, treatment] = e.variants.map((v: Json) => v.id);
    const users = [...usersLandingIn(e, 0, 6, `x-${e.key}`), ...usersLandingIn(e, 1, 6, `y-${e.key}`)];
    await d.assign(e.key, users);
    await d.track(users.map((user_id) => ({ event_type: 'purchase', user_id, experiment_key: e.key })));
    const clean = await d.get(`/api/v1/results/${e.id}`);
    const sizes = (r: Json) => r.metrics[0].variants.map((v: Json) => [v.sample_size, v.conversions]);
    expect(sizes(clean)).toEqual([[6, 6], [6, 6]]);
    expect(clean.diagnostics).toMatchObject({ multiple_exposure_users: 0, excluded_users: 0 });

    // A client reports the first control user in the treatment.
    const res = await t.inject({
      method: 'POST', url: '/api/v1/tracking/events', headers: key,
      payload: { event_type: 'purchase', user_id: users[0], experiment_id: e.id, variant_id: treatment },
    });
    expect(res.statusCode).toBe(200);
    const tail = await d.get(`/api/v1/results/${e.id}?use_cache=false`);
    expect(sizes(tail)).toEqual([[5, 5], [6, 6]]);
    expect(tail.diagnostics).toEqual({
      multiple_exposure_users: 1, excluded_users: 1,
      excluded_by_variant: [{ variant_id: control, variant_name: 'control', users: 1 }, { variant_id: treatment, variant_name: 'treatment', users: 0 }],
    });
    // The sample-ratio check still counts every assignment.
    expect(tail.srm.variants.map((v: Json) => v.observed)).toEqual([6, 6]);

    clock.advance(2 * MINUTE);
    await t.services.results.refreshActive();
    const rolledUp = await d.get(`/api/v1/results/${e.id}?use_cache=false`);
    expect(sizes(rolledUp)).toEqual([[5, 5], [6, 6]]);
    expect(rolledUp.diagnostics).toEqual(tail.diagnostics);
    const [{ n }] = await queryRows<{ n: number }>(t.database.db, sql`SELECT count(*)::int AS n FROM result_excluded_users WHERE experiment_id = ${e.id}`);
    expect(n).toBe(1);
    const daily = await d.get(`/api/v1/experiments/${e.id}/daily-results`);
    expect(daily.metrics[0].days.at(-1).variants.map((v: Json) => [v.sample_size, v.conversions])).toEqual([[5, 5], [6, 6]]);
  });
});

describe('exposure consistency, whatever came first', () => {
  it('finds a user whose client reported another variant before the assignment, after a rollup passed the event', async () => {
    const e = await d.experiment();
    const [control, treatment] = e.variants.map((v: Json) => v.id);
    const [late, early] = usersLandingIn(e, 0, 2, `late-${e.key}`);
    const others = usersLandingIn(e, 1, 3, `other-${e.key}`);
    await d.assign(e.key, [early, ...others]);
    // The client buckets by itself and reports the treatment before the service has assigned `late`.
    for (const user_id of [late, early]) {
      const res = await t.inject({
        method: 'POST', url: '/api/v1/tracking/events', headers: key,
        payload: { event_type: 'purchase', user_id, experiment_id: e.id, variant_id: treatment },
      });
      expect(res.statusCode).toBe(200);
    }
    // A rollup passes the event while `late` has no assignment yet; then `late` is assigned to the control.
    clock.advance(2 * MINUTE);
    await t.services.results.refreshActive();
    await d.assign(e.key, [late]);
    const expected = {
      multiple_exposure_users: 2, excluded_users: 2,
      excluded_by_variant: [{ variant_id: control, variant_name: 'control', users: 2 }, { variant_id: treatment, variant_name: 'treatment', users: 0 }],
    };
    expect((await d.get(`/api/v1/results/${e.id}?use_cache=false`)).diagnostics).toEqual(expected);
    clock.advance(2 * MINUTE);
    await t.services.results.refreshActive();
    expect((await d.get(`/api/v1/results/${e.id}?use_cache=false`)).diagnostics).toEqual(expected);
    const [{ n }] = await queryRows<{ n: number }>(t.database.db, sql`SELECT count(*)::int AS n FROM result_excluded_users WHERE experiment_id = ${e.id}`);
    expect(n).toBe(2);
  });
});

describe('reads write nothing', () => {
  it('leaves rollups, decisions and alerts to the rollup job', async () => {
    const e = await skewedExperiment();
    await d.get(`/api/v1/results/${e.id}`);
    await d.get(`/api/v1/experiments/${e.id}/daily-results`);
    const rows = await queryRows(t.database.db, sql`
      SELECT 1 FROM result_watermarks WHERE experiment_id = ${e.id}
      UNION ALL SELECT 1 FROM result_srm_state WHERE experiment_id = ${e.id}
      UNION ALL SELECT 1 FROM result_context_values WHERE experiment_id = ${e.id}`);
    expect(rows).toEqual([]);
  });

  it('answers 202 with Retry-After when a read runs out of time, and builds the rollups in the background (PostgreSQL)', async () => {
    const app = await t.spawn({ RESULTS_READ_TIMEOUT_MS: '1' }, clock);
    const e = await skewedExperiment();
    const res = await app.app.inject({ method: 'GET', url: `/api/v1/results/${e.id}`, headers: dev.headers });
    if (!process.env.TEST_DATABASE_URL) {
      // Embedded PGlite has no statement timer: the read completes.
      expect(res.statusCode).toBe(200);
      return;
    }
    expect(res.statusCode).toBe(202);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json().detail).toMatch(/being computed/);
    await app.services.results.drain();
    const marks = await queryRows(t.database.db, sql`SELECT stream FROM result_watermarks WHERE experiment_id = ${e.id}`);
    expect(marks.length).toBeGreaterThan(0);
  });
});
