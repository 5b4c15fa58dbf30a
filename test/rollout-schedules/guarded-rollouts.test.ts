import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DUPLICATE_GUARDRAIL } from '../../src/modules/rollout-schedules/guardrails.js';
import { GUARDRAIL_DEGRADED } from '../../src/modules/rollout-schedules/service.js';
import { fixedClock } from '../../src/platform/clock.js';
import { recordNotices } from '../helpers/fakes.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

/**
 * Guarded rollouts end to end (issue 19, deliverable 4): events tracked through the API before and during a stage,
 * the mSPRT guardrail test deciding to advance or to roll back, each decision on the schedule, in the audit log
 * and notified.
 */
type Json = Record<string, any>;
const MINUTE = 60_000;
const clock = fixedClock(new Date('2031-09-01T08:00:00.000Z'));
const BASE = '/api/v1/rollout-schedules';
const USERS = 400;

let t: TestApp;
let dev: TestUser;
let viewer: TestUser;
let key: Record<string, string>;
let notices: ReturnType<typeof recordNotices>;

beforeAll(async () => {
  t = await testApp({ clock, env: { ACCESS_TOKEN_EXPIRE_MINUTES: '525600' } });
  [dev, viewer] = await Promise.all([t.user({ role: 'DEVELOPER' }), t.user()]);
  key = (await t.apiKey(dev)).headers;
  // Every notification the services send, recorded (and delivered as usual) so the test can await none.
  notices = recordNotices(t.services);
});
afterAll(() => t.close());

async function call(method: 'GET' | 'POST' | 'PUT', url: string, user: TestUser = dev, payload?: Json) {
  return t.inject({ method, url, headers: user.headers, ...(payload === undefined ? {} : { payload }) });
}

async function auditOf(entityId: string): Promise<Array<{ action: string; actor_username: string | null; details: Json | null }>> {
  return t.database.session((exec) =>
    exec('SELECT action, actor_username, details FROM audit_logs WHERE entity_id = $1 ORDER BY created_at, action', [entityId]),
  );
}

/** A flag at 0 % with an active guarded schedule of manual stages 10 %, 50 %, 100 %. */
async function guardedRamp(guardrails: Json = {}): Promise<{ flag: Json; schedule: Json }> {
  const flag = (await call('POST', '/api/v1/feature-flags/', dev, { key: t.unique('flag'), name: 'Checkout v2', is_active: true, rollout_percentage: 0 })).json();
  const created = await call('POST', `${BASE}/`, dev, {
    flag_id: flag.id, name: 'Checkout v2 ramp',
    stages: [{ percentage: 10 }, { percentage: 50 }, { percentage: 100 }],
    guardrails: { metrics: [{ event_name: 'checkout_error', direction: 'lower_is_better' }], ...guardrails },
  });
  expect(created.statusCode).toBe(201);
  const schedule = (await call('POST', `${BASE}/${created.json().id}/activate`)).json();
  expect(schedule.status).toBe('active');
  return { flag, schedule };
}

/**
 * USERS users each track a page view (tagged with the flag when `flagKey` is given: they got the flag on) and
 * `errorsOf(i)` checkout errors, at the clock's current time.
 */
async function trackUsers(prefix: string, errorsOf: (i: number) => number, flagKey?: string): Promise<void> {
  const events: Json[] = [];
  for (let i = 0; i < USERS; i++) {
    const user_id = `${prefix}-${i}`;
    events.push({ event_type: 'page_view', user_id, ...(flagKey ? { feature_flag_key: flagKey } : {}) });
    for (let k = 0; k < errorsOf(i); k++) events.push({ event_type: 'checkout_error', user_id });
  }
  for (let from = 0; from < events.length; from += 1000) {
    const res = await t.inject({ method: 'POST', url: '/api/v1/tracking/batch', headers: key, payload: { events: events.slice(from, from + 1000) } });
    expect(res.json()).toMatchObject({ failed: 0 });
  }
}

const tenPercent = (i: number) => (i % 10 === 0 ? 1 : 0);
const half = (i: number) => (i % 2 === 0 ? 1 : 0);

/**
 * One stage under test: baseline traffic in the hour before stage 1 is applied, then an hour of exposed traffic
 * with `exposedErrors`. Leaves the clock an hour after stage 1 was applied; each call starts well after the last,
 * so the windows of one scenario never see another's events.
 */
async function firstStageWith(exposedErrors: (i: number) => number, guardrails: Json = {}) {
  clock.advance(24 * 60 * MINUTE);
  const { flag, schedule } = await guardedRamp(guardrails);
  clock.advance(30 * MINUTE);
  await trackUsers(t.unique('base'), tenPercent);
  clock.advance(30 * MINUTE);
  const first = await call('POST', `${BASE}/stages/${schedule.stages[0].id}/advance`);
  expect(first.statusCode).toBe(200);
  // Nothing to test before the first stage: no decision.
  expect(first.json().decisions).toEqual([]);
  clock.advance(30 * MINUTE);
  await trackUsers(t.unique('exposed'), exposedErrors, flag.key);
  clock.advance(30 * MINUTE);
  return { flag, schedule };
}

describe('guarded rollouts', () => {
  it('advances a stage whose guardrail holds, recording the decision with its test, audited and notified', async () => {
    const { flag, schedule } = await firstStageWith(tenPercent);
    const res = await call('POST', `${BASE}/stages/${schedule.stages[1].id}/advance`);
    expect(res.statusCode).toBe(200);
    const view = res.json();
    expect(view.status).toBe('active');
    expect(view.stages[1].status).toBe('applied');
    expect(view.guardrails).toEqual({ metrics: [{ event_name: 'checkout_error', direction: 'lower_is_better' }], confidence: 0.95, rollback_percentage: 0 });
    expect(view.decisions).toHaveLength(1);
    const decision = view.decisions[0];
    expect(decision).toMatchObject({
      decision: 'advance', stage_id: schedule.stages[0].id, next_stage_id: schedule.stages[1].id, automatic: false,
      confidence: 0.95, rollout_percentage: 50,
    });
    expect(new Date(decision.exposed_to).getTime() - new Date(decision.exposed_from).getTime()).toBe(60 * MINUTE);
    expect(decision.baseline_to).toBe(decision.exposed_from);
    expect(decision.metrics).toEqual([expect.objectContaining({
      event_name: 'checkout_error', degraded: false, baseline_users: USERS, exposed_users: USERS,
      baseline_mean: 0.1, exposed_mean: 0.1, difference: 0, reason: null,
    })]);
    expect((await call('GET', `/api/v1/feature-flags/${flag.id}`, viewer)).json().rollout_percentage).toBe(50);
    expect((await call('GET', `${BASE}/${schedule.id}`, viewer)).json().decisions).toEqual(view.decisions);
    const entry = (await auditOf(schedule.id)).find((e) => e.action === 'rollout_guardrail_decision');
    expect(entry?.details).toMatchObject({ decision: 'advance', decision_id: decision.id, degraded_metrics: [] });
    expect(notices.filter((n) => n.kind === 'rollout_guardrail_decision' && n.payload.schedule_id === schedule.id)).toEqual([
      { kind: 'rollout_guardrail_decision', payload: expect.objectContaining({ decision: 'advance', rollout_percentage: 50, flag_key: flag.key, degraded_metrics: [] }) },
    ]);
  });

  it('refuses to advance a stage whose guardrail degraded, and rolls the flag back and pauses the schedule instead', async () => {
    const { flag, schedule } = await firstStageWith(half);
    const res = await call('POST', `${BASE}/stages/${schedule.stages[1].id}/advance`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: GUARDRAIL_DEGRADED });
    expect((await call('GET', `/api/v1/feature-flags/${flag.id}`, viewer)).json()).toMatchObject({ rollout_percentage: 0, is_active: true });
    const view = (await call('GET', `${BASE}/${schedule.id}`, viewer)).json();
    expect(view.status).toBe('paused');
    expect(view.stages[1].status).toBe('pending');
    expect(view.decisions).toEqual([expect.objectContaining({
      decision: 'rollback', stage_id: schedule.stages[0].id, next_stage_id: null, automatic: false, rollout_percentage: 0,
      metrics: [expect.objectContaining({ event_name: 'checkout_error', degraded: true, baseline_mean: 0.1, exposed_mean: 0.5 })],
    })]);
    expect(view.decisions[0].metrics[0].log_likelihood_ratio).toBeGreaterThan(view.decisions[0].metrics[0].log_threshold);
    const actions = (await auditOf(schedule.id)).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['rollout_schedule_pause', 'rollout_guardrail_decision']));
    expect(actions.filter((a) => a === 'rollout_stage_advance')).toHaveLength(1);
    const flagEntry = (await auditOf(flag.id)).at(-1);
    expect(flagEntry).toMatchObject({ action: 'feature_flag_update', details: { cause: 'guardrail_rollback', rollout_schedule_id: schedule.id } });
    expect(notices.filter((n) => n.payload.schedule_id === schedule.id).map((n) => n.payload)).toEqual([
      expect.objectContaining({ decision: 'rollback', rollout_percentage: 0, degraded_metrics: ['checkout_error'] }),
    ]);
  });

  it('rolls back on the scheduler as soon as a guardrail degrades, once, to the configured percentage', async () => {
    const { flag, schedule } = await firstStageWith(half, { rollback_percentage: 5, confidence: 0.99 });
    await t.services.scheduler.runDue(clock.now());
    const view = (await call('GET', `${BASE}/${schedule.id}`, viewer)).json();
    expect(view.status).toBe('paused');
    expect(view.decisions).toEqual([expect.objectContaining({ decision: 'rollback', automatic: true, rollout_percentage: 5, confidence: 0.99 })]);
    expect((await call('GET', `/api/v1/feature-flags/${flag.id}`, viewer)).json().rollout_percentage).toBe(5);
    expect((await auditOf(schedule.id)).find((e) => e.action === 'rollout_guardrail_decision')?.actor_username).toBe('system');
    // Activated again, the exposure that caused the rollback never causes another.
    expect((await call('POST', `${BASE}/${schedule.id}/activate`)).json().status).toBe('active');
    clock.advance(MINUTE);
    await t.services.scheduler.runDue(clock.now());
    expect((await call('GET', `${BASE}/${schedule.id}`, viewer)).json()).toMatchObject({ status: 'active', decisions: [expect.anything()] });
  });

  it('never raises the rollout when rolling back: a rollback_percentage above the current stage keeps the stage', async () => {
    const { flag, schedule } = await firstStageWith(half, { rollback_percentage: 40 });
    await t.services.scheduler.runDue(clock.now());
    expect((await call('GET', `${BASE}/${schedule.id}`, viewer)).json()).toMatchObject({
      status: 'paused', decisions: [expect.objectContaining({ decision: 'rollback', rollout_percentage: 10 })],
    });
    expect((await call('GET', `/api/v1/feature-flags/${flag.id}`, viewer)).json().rollout_percentage).toBe(10);
  });

  it('leaves a schedule whose guardrail holds running on the scheduler, with no decision until an advance', async () => {
    const { flag, schedule } = await firstStageWith(tenPercent);
    await t.services.scheduler.runDue(clock.now());
    expect((await call('GET', `${BASE}/${schedule.id}`, viewer)).json()).toMatchObject({ status: 'active', decisions: [] });
    expect((await call('GET', `/api/v1/feature-flags/${flag.id}`, viewer)).json().rollout_percentage).toBe(10);
  });

  it('takes one stage per scheduler run when a guarded schedule fell behind, testing each stage before the next', async () => {
    clock.advance(24 * 60 * MINUTE);
    const flag = (await call('POST', '/api/v1/feature-flags/', dev, { key: t.unique('flag'), name: 'F', is_active: true, rollout_percentage: 0 })).json();
    const at = (minutes: number) => new Date(clock.now().getTime() + minutes * MINUTE).toISOString();
    const created = (await call('POST', `${BASE}/`, dev, {
      flag_id: flag.id, name: 'Timed', stages: [{ percentage: 20, scheduled_at: at(1) }, { percentage: 60, scheduled_at: at(2) }],
      guardrails: { metrics: [{ event_name: 'checkout_error', direction: 'lower_is_better' }] },
    })).json();
    await call('POST', `${BASE}/${created.id}/activate`);
    clock.advance(10 * MINUTE);
    await t.services.scheduler.runDue(clock.now());
    expect((await call('GET', `/api/v1/feature-flags/${flag.id}`, viewer)).json().rollout_percentage).toBe(20);
    expect((await call('GET', `${BASE}/${created.id}`, viewer)).json().decisions).toEqual([]);
    clock.advance(MINUTE);
    await t.services.scheduler.runDue(clock.now());
    const view = (await call('GET', `${BASE}/${created.id}`, viewer)).json();
    expect(view.status).toBe('completed');
    // No traffic at all: nothing could show a degradation, and the decision says why.
    expect(view.decisions).toEqual([expect.objectContaining({
      decision: 'advance', automatic: true, rollout_percentage: 60,
      metrics: [expect.objectContaining({ degraded: false, exposed_users: 0, reason: 'insufficient_data' })],
    })]);
  });

  it('validates guardrails and lets them be changed or removed while the schedule is open', async () => {
    const flag = (await call('POST', '/api/v1/feature-flags/', dev, { key: t.unique('flag'), name: 'F' })).json();
    const bad = [
      { metrics: [] },
      { metrics: [{ event_name: 'e', direction: 'sideways' }] },
      { metrics: [{ event_name: 'e', direction: 'lower_is_better' }], confidence: 1 },
      { metrics: [{ event_name: 'e', direction: 'lower_is_better' }], rollback_percentage: 101 },
      { metrics: [{ event_name: 'e', direction: 'lower_is_better' }], extra: true },
    ];
    for (const guardrails of bad) {
      const res = await call('POST', `${BASE}/`, dev, { flag_id: flag.id, name: 'R', guardrails });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0].loc.slice(0, 2)).toEqual(['body', 'guardrails']);
    }
    const dup = await call('POST', `${BASE}/`, dev, {
      flag_id: flag.id, name: 'R',
      guardrails: { metrics: [{ event_name: 'e', direction: 'lower_is_better' }, { event_name: 'e', direction: 'higher_is_better' }] },
    });
    expect(dup.statusCode).toBe(422);
    expect(dup.json().detail).toEqual([{ type: 'value_error', loc: ['body', 'guardrails', 'metrics', 1, 'event_name'], msg: DUPLICATE_GUARDRAIL }]);
    const created = (await call('POST', `${BASE}/`, dev, { flag_id: flag.id, name: 'R', stages: [{ percentage: 20 }] })).json();
    expect(created.guardrails).toBeNull();
    const guardrails = { metrics: [{ event_name: 'purchase', direction: 'higher_is_better' }], confidence: 0.9 };
    const updated = await call('PUT', `${BASE}/${created.id}`, dev, { guardrails });
    expect(updated.json().guardrails).toEqual({ ...guardrails, rollback_percentage: 0 });
    expect((await auditOf(created.id)).at(-1)).toMatchObject({ action: 'rollout_schedule_update' });
    expect((await call('PUT', `${BASE}/${created.id}`, dev, { guardrails: null })).json().guardrails).toBeNull();
  });
});
