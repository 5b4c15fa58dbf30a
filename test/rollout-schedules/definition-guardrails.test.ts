import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFINITION_GUARDS_SCHEDULE,
  KIND_GUARDS_SCHEDULE,
  UNKNOWN_DEFINITION,
  guardrailKindRefused,
} from '../../src/modules/metric-definitions/service.js';
import { DUPLICATE_DEFINITION_GUARDRAIL, GUARDRAIL_BOTH_METRICS, GUARDRAIL_NEEDS_METRIC } from '../../src/modules/rollout-schedules/guardrails.js';
import { GUARDRAIL_DEGRADED } from '../../src/modules/rollout-schedules/service.js';
import { fixedClock } from '../../src/platform/clock.js';
import { recordNotices } from '../helpers/fakes.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

/**
 * Guardrails on metric library definitions (issue 32, deliverable 5): a mean definition (capped as defined) and a
 * ratio definition (delta method) tested at a stage by the guardrails' mSPRT, a breach rolling back, pausing,
 * auditing and notifying as an event guardrail's does; the validation of what a guardrail may name, and the metric
 * library refusing to delete (or change the kind of) a definition an open schedule guards on.
 */
type Json = Record<string, any>;
const MINUTE = 60_000;
const clock = fixedClock(new Date('2032-03-01T08:00:00.000Z'));
const BASE = '/api/v1/rollout-schedules';
const DEFS = '/api/v1/metric-definitions';
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

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, user: TestUser = dev, payload?: Json) =>
  t.inject({ method, url, headers: user.headers, ...(payload === undefined ? {} : { payload }) });

async function define(body: Json): Promise<Json> {
  const res = await call('POST', DEFS, dev, { name: t.unique('def'), ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const ratioDefinition = () => define({
  kind: 'ratio', numerator: { event_name: 'checkout_error', aggregate: 'count' }, denominator: { event_name: 'page_view', aggregate: 'count' },
});
const latency = (capping: Json) => define({ kind: 'mean', event_name: 'checkout_ms', aggregate: 'sum', capping, higher_is_better: false });

async function auditOf(entityId: string): Promise<Array<{ action: string; details: Json | null }>> {
  return t.database.session((exec) => exec('SELECT action, details FROM audit_logs WHERE entity_id = $1 ORDER BY created_at, action', [entityId]));
}

/** USERS users, each with `events(i)` (event_type and value), the first tagged with the flag when `flagKey` is given. */
async function trackUsers(prefix: string, events: (i: number) => Array<{ event_type: string; value?: number }>, flagKey?: string) {
  const batch: Json[] = [];
  for (let i = 0; i < USERS; i++) {
    events(i).forEach((e, k) => batch.push({ ...e, user_id: `${prefix}-${i}`, ...(flagKey && k === 0 ? { feature_flag_key: flagKey } : {}) }));
  }
  for (let from = 0; from < batch.length; from += 1000) {
    const res = await t.inject({ method: 'POST', url: '/api/v1/tracking/batch', headers: key, payload: { events: batch.slice(from, from + 1000) } });
    expect(res.json()).toMatchObject({ failed: 0 });
  }
}

/**
 * An active guarded schedule (manual stages 10, 50, 100 %) with baseline traffic in the half hour before stage 1 and
 * exposed traffic in the half hour after it; leaves the clock an hour after stage 1 was applied.
 */
async function firstStageWith(guardrails: Json, baseline: (i: number) => Array<{ event_type: string; value?: number }>, exposed: typeof baseline) {
  clock.advance(24 * 60 * MINUTE);
  const flag = (await call('POST', '/api/v1/feature-flags/', dev, { key: t.unique('flag'), name: 'Checkout v3', is_active: true, rollout_percentage: 0 })).json();
  const created = await call('POST', `${BASE}/`, dev, { flag_id: flag.id, name: 'Checkout v3 ramp', stages: [{ percentage: 10 }, { percentage: 50 }, { percentage: 100 }], guardrails });
  expect(created.statusCode, created.body).toBe(201);
  const schedule = (await call('POST', `${BASE}/${created.json().id}/activate`)).json();
  clock.advance(30 * MINUTE);
  await trackUsers(t.unique('base'), baseline);
  clock.advance(30 * MINUTE);
  expect((await call('POST', `${BASE}/stages/${schedule.stages[0].id}/advance`)).statusCode).toBe(200);
  clock.advance(30 * MINUTE);
  await trackUsers(t.unique('exposed'), exposed, flag.key);
  clock.advance(30 * MINUTE);
  return { flag, schedule };
}

const views = (i: number) => 1 + (i % 2);
const pageViews = (i: number) => Array.from({ length: views(i) }, () => ({ event_type: 'page_view' }));
const errors = (n: number) => Array.from({ length: n }, () => ({ event_type: 'checkout_error' }));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('guardrails on metric library definitions', () => {
  it('a ratio guardrail (delta method) that degrades rolls back and pauses, audited and notified with the definition', async () => {
    const d = await ratioDefinition();
    const { flag, schedule } = await firstStageWith(
      { metrics: [{ event_name: 'page_view', direction: 'higher_is_better' }, { metric_definition_id: d.id, direction: 'lower_is_better' }] },
      (i) => [...pageViews(i), ...errors(i % 10 === 0 ? 1 : 0)],
      (i) => [...pageViews(i), ...errors(i % 2 === 0 ? 1 : 0)],
    );
    expect(schedule.guardrails.metrics).toEqual([
      { event_name: 'page_view', direction: 'higher_is_better' }, { metric_definition_id: d.id, direction: 'lower_is_better' },
    ]);
    const res = await call('POST', `${BASE}/stages/${schedule.stages[1].id}/advance`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: GUARDRAIL_DEGRADED });
    expect((await call('GET', `/api/v1/feature-flags/${flag.id}`, viewer)).json().rollout_percentage).toBe(0);
    const view = (await call('GET', `${BASE}/${schedule.id}`, viewer)).json();
    expect(view.status).toBe('paused');
    const [events, ratio] = view.decisions[0].metrics;
    expect(view.decisions[0].decision).toBe('rollback');
    expect(events).toMatchObject({ event_name: 'page_view', degraded: false, difference: 0 });
    expect(events).not.toHaveProperty('definition');
    // Errors per page view: Σ errors / Σ page views in each window (40 / 600 before, 200 / 600 exposed).
    const totalViews = Array.from({ length: USERS }, (_, i) => views(i)).reduce((a, b) => a + b, 0);
    expect(ratio).toMatchObject({
      metric_definition_id: d.id, direction: 'lower_is_better', degraded: true, baseline_users: USERS, exposed_users: USERS, reason: null,
      definition: { name: d.name, version: 1, kind: 'ratio', capping: null },
    });
    expect(ratio).not.toHaveProperty('event_name');
    expect(ratio.baseline_mean).toBeCloseTo(40 / totalViews, 12);
    expect(ratio.exposed_mean).toBeCloseTo(200 / totalViews, 12);
    expect(ratio.log_likelihood_ratio).toBeGreaterThan(ratio.log_threshold);
    const entry = (await auditOf(schedule.id)).find((e) => e.action === 'rollout_guardrail_decision');
    expect(entry?.details).toMatchObject({ decision: 'rollback', degraded_metrics: [], degraded_metric_definitions: [{ id: d.id, name: d.name }] });
    expect((await auditOf(schedule.id)).map((e) => e.action)).toContain('rollout_schedule_pause');
    expect(notices.filter((n) => n.payload.schedule_id === schedule.id).map((n) => n.payload)).toEqual([
      expect.objectContaining({ decision: 'rollback', degraded_metrics: [], degraded_metric_definitions: [{ id: d.id, name: d.name }] }),
    ]);
  });

  it('a mean guardrail is capped as defined (pooled percentile over both windows) before it is tested, and its breach rolls back on the scheduler', async () => {
    const d = await latency({ type: 'percentile', p: 0.99 });
    const base = (i: number) => (i === 0 ? 100_000 : 100 + (i % 5) * 10);
    const slow = (i: number) => (i === 0 ? 100_000 : 200 + (i % 5) * 10);
    const { flag, schedule } = await firstStageWith(
      { metrics: [{ metric_definition_id: d.id, direction: 'lower_is_better' }], rollback_percentage: 0 },
      (i) => [{ event_type: 'page_view' }, { event_type: 'checkout_ms', value: base(i) }],
      (i) => [{ event_type: 'page_view' }, { event_type: 'checkout_ms', value: slow(i) }],
    );
    await t.services.scheduler.runDue(clock.now());
    const view = (await call('GET', `${BASE}/${schedule.id}`, viewer)).json();
    expect(view.status).toBe('paused');
    expect((await call('GET', `/api/v1/feature-flags/${flag.id}`, viewer)).json().rollout_percentage).toBe(0);
    const [m] = view.decisions[0].metrics;
    // The pooled 99th percentile of the 800 per-user values is 240 (numpy's linear method); the two outliers are capped.
    expect(m).toMatchObject({
      metric_definition_id: d.id, degraded: true, reason: null,
      definition: { kind: 'mean', version: 1, capping: { type: 'percentile', p: 0.99, cap: 240, users_capped: 2 } },
    });
    const capped = (f: (i: number) => number) => mean(Array.from({ length: USERS }, (_, i) => Math.min(f(i), 240)));
    expect(m.baseline_mean).toBeCloseTo(capped(base), 9);
    expect(m.exposed_mean).toBeCloseTo(capped(slow), 9);
    expect(view.decisions[0]).toMatchObject({ decision: 'rollback', automatic: true });
  });

  it('an absolute cap below every value leaves nothing to tell apart: the stage advances, the decision says why', async () => {
    const d = await latency({ type: 'absolute', value: 50 });
    const { schedule } = await firstStageWith(
      { metrics: [{ metric_definition_id: d.id, direction: 'lower_is_better' }] },
      (i) => [{ event_type: 'page_view' }, { event_type: 'checkout_ms', value: 100 + i }],
      (i) => [{ event_type: 'page_view' }, { event_type: 'checkout_ms', value: 300 + i }],
    );
    const res = await call('POST', `${BASE}/stages/${schedule.stages[1].id}/advance`);
    expect(res.statusCode).toBe(200);
    expect(res.json().decisions[0]).toMatchObject({
      decision: 'advance',
      metrics: [{
        metric_definition_id: d.id, degraded: false, baseline_mean: 50, exposed_mean: 50, difference: 0, reason: 'zero_variance',
        definition: { capping: { type: 'absolute', p: null, cap: 50, users_capped: 2 * USERS } },
      }],
    });
  });

  it('validates what a guardrail names: one of event_name and metric_definition_id, a known mean or ratio definition, each once', async () => {
    const flag = (await call('POST', '/api/v1/feature-flags/', dev, { key: t.unique('flag'), name: 'F' })).json();
    const [ratio, proportion, quantile] = await Promise.all([
      ratioDefinition(),
      define({ kind: 'proportion', event_name: 'signup' }),
      define({ kind: 'quantile', event_name: 'page_load', aggregate: 'sum', quantile: 0.9 }),
    ]);
    const create = (metrics: Json[]) => call('POST', `${BASE}/`, dev, { flag_id: flag.id, name: 'R', guardrails: { metrics } });
    const at = (i: number, field: string) => ['body', 'guardrails', 'metrics', i, field];
    const cases: Array<[Json[], Json[]]> = [
      [[{ direction: 'lower_is_better' }], [{ type: 'missing', loc: at(0, 'event_name'), msg: GUARDRAIL_NEEDS_METRIC }]],
      [[{ event_name: 'e', metric_definition_id: ratio.id, direction: 'lower_is_better' }], [{ type: 'value_error', loc: at(0, 'metric_definition_id'), msg: GUARDRAIL_BOTH_METRICS }]],
      [[{ metric_definition_id: ratio.id, direction: 'lower_is_better' }, { metric_definition_id: ratio.id, direction: 'higher_is_better' }],
        [{ type: 'value_error', loc: at(1, 'metric_definition_id'), msg: DUPLICATE_DEFINITION_GUARDRAIL }]],
      [[{ metric_definition_id: '00000000-0000-4000-8000-000000000000', direction: 'lower_is_better' }], [{ type: 'value_error', loc: at(0, 'metric_definition_id'), msg: UNKNOWN_DEFINITION }]],
      [[{ event_name: 'e', direction: 'lower_is_better' }, { metric_definition_id: proportion.id, direction: 'higher_is_better' }, { metric_definition_id: quantile.id, direction: 'lower_is_better' }], [
        { type: 'value_error', loc: at(1, 'metric_definition_id'), msg: guardrailKindRefused('proportion'), ctx: { kind: 'proportion' } },
        { type: 'value_error', loc: at(2, 'metric_definition_id'), msg: guardrailKindRefused('quantile'), ctx: { kind: 'quantile' } },
      ]],
    ];
    for (const [metrics, detail] of cases) {
      const res = await create(metrics);
      expect(res.statusCode, JSON.stringify(metrics)).toBe(422);
      expect(res.json().detail).toEqual(detail);
    }
    expect((await create([{ metric_definition_id: 'not-a-uuid', direction: 'lower_is_better' }])).statusCode).toBe(422);
    const created = (await call('POST', `${BASE}/`, dev, { flag_id: flag.id, name: 'R' })).json();
    const put = await call('PUT', `${BASE}/${created.id}`, dev, { guardrails: { metrics: [{ metric_definition_id: quantile.id, direction: 'lower_is_better' }] } });
    expect(put.statusCode).toBe(422);
    expect(put.json().detail[0].loc).toEqual(at(0, 'metric_definition_id'));
    const ok = await call('PUT', `${BASE}/${created.id}`, dev, { guardrails: { metrics: [{ metric_definition_id: ratio.id, direction: 'lower_is_better' }] } });
    expect(ok.json().guardrails).toEqual({ metrics: [{ metric_definition_id: ratio.id, direction: 'lower_is_better' }], confidence: 0.95, rollback_percentage: 0 });
  });

  it('an open schedule guarding on a definition blocks its delete and a change to a kind guardrails cannot test (409); once cancelled it can go', async () => {
    const d = await ratioDefinition();
    const flag = (await call('POST', '/api/v1/feature-flags/', dev, { key: t.unique('flag'), name: 'F' })).json();
    const schedule = (await call('POST', `${BASE}/`, dev, {
      flag_id: flag.id, name: 'Guarded', stages: [{ percentage: 10 }], guardrails: { metrics: [{ metric_definition_id: d.id, direction: 'lower_is_better' }] },
    })).json();
    const summary = [{ id: schedule.id, name: 'Guarded', status: 'draft', flag_id: flag.id }];
    const refused = await call('DELETE', `${DEFS}/${d.id}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ detail: { code: 'metric_definition_in_use', message: DEFINITION_GUARDS_SCHEDULE, experiments: [], rollout_schedules: summary } });
    const kind = await call('PUT', `${DEFS}/${d.id}`, dev, { kind: 'quantile', event_name: 'page_load', aggregate: 'sum', quantile: 0.9 });
    expect(kind.statusCode).toBe(409);
    expect(kind.json()).toEqual({ detail: { code: 'metric_definition_guards_schedule', message: KIND_GUARDS_SCHEDULE, rollout_schedules: summary } });
    // Other edits take effect for the next test (the version is recorded in the decision).
    const capped = await call('PUT', `${DEFS}/${d.id}`, dev, { capping: { type: 'absolute', value: 3 } });
    expect(capped.json().version).toBe(2);
    expect((await call('POST', `${BASE}/${schedule.id}/activate`)).json().status).toBe('active');
    expect((await call('DELETE', `${DEFS}/${d.id}`)).json().detail.rollout_schedules).toEqual([{ ...summary[0], status: 'active' }]);
    expect((await call('POST', `${BASE}/${schedule.id}/cancel`)).statusCode).toBe(200);
    expect((await call('DELETE', `${DEFS}/${d.id}`)).statusCode).toBe(204);
    expect((await call('GET', `${DEFS}/${d.id}`, viewer)).statusCode).toBe(404);
  });
});
