import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAG_NOT_FOUND } from '../../src/modules/feature-flags/service.js';
import { errorsClock, flagErrorsApp, MINUTE, type FlagErrorsApp, type Headers, type Json } from '../helpers/flag-errors.js';
import type { TestApp, TestUser } from '../helpers/test-app.js';

const clock = errorsClock();
const MISSING_ID = '00000000-0000-4000-8000-000000000000';
const DEFAULT_SETTINGS = { auto_rollback_enabled: true, error_rate_threshold: 10, window_minutes: 5 };

let t: TestApp;
let admin: TestUser;
let dev: TestUser;
let analyst: TestUser;
let viewer: TestUser;
let root: TestUser;
let trusted: Headers;
let plain: Headers;
let analystSdk: Headers;
let call: FlagErrorsApp['call'];
let createFlag: FlagErrorsApp['createFlag'];
let reportErrors: FlagErrorsApp['reportErrors'];

beforeAll(async () => {
  ({ t, admin, dev, analyst, viewer, root, trusted, plain, analystSdk, call, createFlag, reportErrors } = await flagErrorsApp(clock));
});
afterAll(() => t.close());

async function tick(minutes: number): Promise<void> {
  clock.advance(minutes * MINUTE);
  await t.services.scheduler.runDue(clock.now());
}
const readFlag = async (id: string) => (await call('GET', `/api/v1/feature-flags/${id}`, viewer.headers)).json();
const configUrl = (flagId: string) => `/api/v1/safety/feature-flags/${flagId}/config`;
const checkUrl = (flagId: string) => `/api/v1/safety/feature-flags/${flagId}/check`;
const rollbackUrl = (flagId: string, query = '') => `/api/v1/safety/feature-flags/${flagId}/rollback${query}`;
const check = async (flagId: string) => (await call('GET', checkUrl(flagId), viewer.headers)).json();
const configure = async (flagId: string, body: Json) => {
  const res = await call('POST', configUrl(flagId), root.headers, body);
  if (res.statusCode !== 200) throw new Error(`configure: ${res.statusCode} ${res.body}`);
  return res.json();
};

async function auditOf(entityId: string): Promise<Array<{ action: string; actor_id: string | null; actor_username: string | null; details: Json | null }>> {
  return t.database.session((exec) =>
    exec('SELECT action, actor_id, actor_username, details FROM audit_logs WHERE entity_id = $1 ORDER BY created_at', [entityId]),
  );
}

async function activeSchedule(flagId: string): Promise<Json> {
  const created = await call('POST', '/api/v1/rollout-schedules/', dev.headers, { flag_id: flagId, name: 'Ramp', stages: [{ percentage: 100 }] });
  const res = await call('POST', `/api/v1/rollout-schedules/${created.json().id}/activate`, dev.headers);
  expect(res.json().status).toBe('active');
  return res.json();
}
const scheduleStatus = async (id: string) => (await call('GET', `/api/v1/rollout-schedules/${id}`, viewer.headers)).json().status;

describe('global settings', () => {
  it('are readable by every role, with defaults until changed', async () => {
    const res = await call('GET', '/api/v1/safety/settings', viewer.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...DEFAULT_SETTINGS, updated_at: null });
    expect((await call('GET', '/api/v1/safety/settings', null)).statusCode).toBe(401);
  });

  it('are changed by a superuser only; omitted fields keep their value; nulls and bad values are 422', async () => {
    const res = await call('POST', '/api/v1/safety/settings', root.headers, { window_minutes: 15 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...DEFAULT_SETTINGS, window_minutes: 15, updated_at: clock.now().toISOString() });
    const kept = await call('POST', '/api/v1/safety/settings', root.headers, { error_rate_threshold: 2.5 });
    expect(kept.json()).toMatchObject({ window_minutes: 15, error_rate_threshold: 2.5, auto_rollback_enabled: true });

    expect((await call('POST', '/api/v1/safety/settings', admin.headers, { window_minutes: 1 })).statusCode).toBe(403);
    expect((await call('POST', '/api/v1/safety/settings', null, { window_minutes: 1 })).statusCode).toBe(401);
    const cases: Array<[Json, Json]> = [
      [{ auto_rollback_enabled: null }, { type: 'null_not_allowed', loc: ['body', 'auto_rollback_enabled'] }],
      [{ window_minutes: 0 }, { type: 'greater_than_equal', loc: ['body', 'window_minutes'] }],
      [{ error_rate_threshold: 0 }, { type: 'greater_than', loc: ['body', 'error_rate_threshold'] }],
      [{ threshold: 1 }, { type: 'extra_forbidden', loc: ['body', 'threshold'] }],
    ];
    for (const [body, issue] of cases) {
      const refused = await call('POST', '/api/v1/safety/settings', root.headers, body);
      expect(refused.statusCode).toBe(422);
      expect(refused.json().detail[0]).toMatchObject(issue);
    }
    expect((await call('GET', '/api/v1/safety/settings', viewer.headers)).json()).toMatchObject({ window_minutes: 15, error_rate_threshold: 2.5 });
    const entries = await t.database.session((exec) => exec<{ after: Json }>("SELECT after FROM audit_logs WHERE action = 'safety_settings_update' ORDER BY created_at"));
    expect(entries.map((e) => e.after)).toEqual([{ window_minutes: 15 }, { error_rate_threshold: 2.5 }]);
    await call('POST', '/api/v1/safety/settings', root.headers, DEFAULT_SETTINGS);
  });
});

describe('per-flag config', () => {
  it('shows the defaults while none is stored; a create takes the defaults for omitted fields', async () => {
    const flag = await createFlag();
    const empty = await call('GET', configUrl(flag.id), viewer.headers);
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({
      flag_id: flag.id, enabled: false, metrics: {}, rollback_percentage: 0, last_rollback_at: null, created_at: null, updated_at: null,
    });
    const created = await call('POST', configUrl(flag.id), root.headers, { enabled: true });
    expect(created.statusCode).toBe(200);
    expect(created.json()).toEqual({
      flag_id: flag.id, enabled: true, metrics: {}, rollback_percentage: 0, last_rollback_at: null,
      created_at: clock.now().toISOString(), updated_at: clock.now().toISOString(),
    });
    expect((await call('GET', configUrl(flag.id), viewer.headers)).json()).toEqual(created.json());
  });

  it('keeps omitted fields on update and records each change', async () => {
    const flag = await createFlag();
    await configure(flag.id, { rollback_percentage: 20, metrics: { error_rate_threshold: 3 } });
    const updated = await configure(flag.id, { enabled: true });
    expect(updated).toMatchObject({ enabled: true, rollback_percentage: 20, metrics: { error_rate_threshold: 3 } });
    const replaced = await configure(flag.id, { metrics: { window_minutes: 10 } });
    expect(replaced).toMatchObject({ enabled: true, rollback_percentage: 20, metrics: { window_minutes: 10 } });
    const entries = (await auditOf(flag.id)).filter((e) => e.action === 'safety_config_update');
    expect(entries).toHaveLength(3);
  });

  it('refuses null for enabled, metrics and rollback_percentage, and other bad values, changing nothing', async () => {
    const flag = await createFlag();
    const stored = await configure(flag.id, { enabled: true, rollback_percentage: 10, metrics: { window_minutes: 3 } });
    const cases: Array<[Json, Json]> = [
      [{ enabled: null }, { type: 'null_not_allowed', loc: ['body', 'enabled'] }],
      [{ metrics: null }, { type: 'null_not_allowed', loc: ['body', 'metrics'] }],
      [{ rollback_percentage: null }, { type: 'null_not_allowed', loc: ['body', 'rollback_percentage'] }],
      [{ rollback_percentage: 101 }, { type: 'less_than_equal', loc: ['body', 'rollback_percentage'] }],
      [{ rollback_percentage: -1 }, { type: 'greater_than_equal', loc: ['body', 'rollback_percentage'] }],
      [{ metrics: { latency: 1 } }, { type: 'extra_forbidden', loc: ['body', 'metrics', 'latency'] }],
      [{ metrics: { window_minutes: 0 } }, { type: 'greater_than_equal', loc: ['body', 'metrics', 'window_minutes'] }],
      [{ enabled: 'yes' }, { type: 'bool_parsing', loc: ['body', 'enabled'] }],
      [{ owner: 'me' }, { type: 'extra_forbidden', loc: ['body', 'owner'] }],
    ];
    for (const [body, issue] of cases) {
      const res = await call('POST', configUrl(flag.id), root.headers, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().detail[0]).toMatchObject(issue);
    }
    expect((await call('GET', configUrl(flag.id), viewer.headers)).json()).toEqual(stored);
  });

  it('needs a superuser to change (an ADMIN gets 403), and knows unknown flags', async () => {
    const flag = await createFlag();
    for (const user of [admin, dev]) expect((await call('POST', configUrl(flag.id), user.headers, { enabled: true })).statusCode).toBe(403);
    expect((await call('POST', configUrl(flag.id), null, { enabled: true })).statusCode).toBe(401);
    expect((await call('GET', configUrl(flag.id), viewer.headers)).json().created_at).toBeNull();
    const missing = await call('POST', configUrl(MISSING_ID), root.headers, {});
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: FLAG_NOT_FOUND });
    expect((await call('GET', configUrl(MISSING_ID), viewer.headers)).statusCode).toBe(404);
    expect((await call('GET', configUrl('abc'), viewer.headers)).json().detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'flag_id'] });
    expect((await call('GET', configUrl(flag.id), null)).statusCode).toBe(401);
  });
});

describe('check', () => {
  it('computes counted errors per minute over the window against the threshold, and forgets old reports', async () => {
    const flag = await createFlag();
    await configure(flag.id, { enabled: true, metrics: { error_rate_threshold: 2, window_minutes: 4 }, rollback_percentage: 10 });
    await reportErrors(trusted, flag.key, 9);
    await reportErrors(plain, flag.key, 30);
    const res = await call('GET', checkUrl(flag.id), analyst.headers);
    expect(res.statusCode).toBe(200);
    const now = clock.now();
    expect(res.json()).toEqual({
      flag_id: flag.id, flag_key: flag.key, enabled: true, auto_rollback_enabled: true, window_minutes: 4,
      window_start: new Date(now.getTime() - 4 * MINUTE).toISOString(), error_count: 9, uncounted_error_count: 30, error_rate: 2.25,
      error_rate_threshold: 2, threshold_exceeded: true, would_roll_back: true, rollback_percentage: 10, last_rollback_at: null,
      checked_at: now.toISOString(),
    });
    clock.advance(4 * MINUTE);
    expect(await check(flag.id)).toMatchObject({ error_count: 0, uncounted_error_count: 0, error_rate: 0, threshold_exceeded: false });
  });

  it('uses the global threshold and window unless the flag overrides them; a flag without config is not monitored', async () => {
    const flag = await createFlag();
    await reportErrors(trusted, flag.key, 51);
    expect(await check(flag.id)).toMatchObject({
      enabled: false, window_minutes: 5, error_rate_threshold: 10, error_count: 51, error_rate: 10.2, threshold_exceeded: true, would_roll_back: false,
    });
    expect((await call('GET', checkUrl(MISSING_ID), viewer.headers)).statusCode).toBe(404);
    expect((await call('GET', checkUrl('nope'), viewer.headers)).statusCode).toBe(422);
    expect((await call('GET', checkUrl(flag.id), null)).statusCode).toBe(401);
  });
});

describe('rollback', () => {
  it('to 0 turns the flag off for all users, pauses its active schedule, and records it', async () => {
    const flag = await createFlag();
    const schedule = await activeSchedule(flag.id);
    const res = await call('POST', rollbackUrl(flag.id, '?percentage=0&reason=checkout%20errors'), root.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      flag_id: flag.id, flag_key: flag.key, percentage: 0, reason: 'checkout errors', automatic: false, is_active: false,
      rollout_percentage: 0, paused_schedule_ids: [schedule.id], rolled_back_at: clock.now().toISOString(),
    });
    expect(await readFlag(flag.id)).toMatchObject({ is_active: false, status: 'inactive', rollout_percentage: 0 });
    expect(await scheduleStatus(schedule.id)).toBe('paused');
    const entry = (await auditOf(flag.id)).find((e) => e.action === 'safety_rollback');
    expect(entry).toMatchObject({ actor_id: root.id, details: { percentage: 0, reason: 'checkout errors', automatic: false, paused_schedule_ids: [schedule.id] } });
    expect((await auditOf(schedule.id)).at(-1)).toMatchObject({ action: 'rollout_schedule_pause', actor_id: root.id });
  });

  it('to a percentage sets the rollout and keeps the flag on; without one it uses the configured rollback_percentage', async () => {
    const flag = await createFlag();
    expect((await call('POST', rollbackUrl(flag.id, '?percentage=30'), root.headers)).json()).toMatchObject({ is_active: true, rollout_percentage: 30, reason: null });
    await configure(flag.id, { rollback_percentage: 5 });
    expect((await call('POST', rollbackUrl(flag.id), root.headers)).json()).toMatchObject({ percentage: 5, rollout_percentage: 5, is_active: true });
    expect(await readFlag(flag.id)).toMatchObject({ is_active: true, rollout_percentage: 5 });
  });

  it('needs a superuser, a percentage from 0 to 100 and a known flag; a refusal changes nothing', async () => {
    const flag = await createFlag();
    for (const query of ['?percentage=101', '?percentage=-1', '?percentage=abc', '?percentage=12.5']) {
      const res = await call('POST', rollbackUrl(flag.id, query), root.headers);
      expect(res.statusCode, query).toBe(422);
      expect(res.json().detail[0].loc).toEqual(['query', 'percentage']);
    }
    for (const user of [admin, dev]) expect((await call('POST', rollbackUrl(flag.id, '?percentage=0'), user.headers)).statusCode).toBe(403);
    expect((await call('POST', rollbackUrl(flag.id, '?percentage=0'), null)).statusCode).toBe(401);
    const missing = await call('POST', rollbackUrl(MISSING_ID, '?percentage=0'), root.headers);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: FLAG_NOT_FOUND });
    expect(await readFlag(flag.id)).toMatchObject({ is_active: true, rollout_percentage: 50 });
    expect((await auditOf(flag.id)).map((e) => e.action)).not.toContain('safety_rollback');
  });
});

describe('automatic rollback', () => {
  it('rolls a monitored flag back once when counted errors cross its threshold, as the system', async () => {
    const flag = await createFlag();
    const schedule = await activeSchedule(flag.id);
    await configure(flag.id, { enabled: true, metrics: { error_rate_threshold: 1, window_minutes: 5 }, rollback_percentage: 0 });
    await reportErrors(trusted, flag.key, 5);
    await tick(1);
    expect(await readFlag(flag.id)).toMatchObject({ is_active: true, rollout_percentage: 50 });
    await reportErrors(trusted, flag.key, 1);
    await tick(1);
    const rolledBackAt = clock.now().toISOString();
    expect(await readFlag(flag.id)).toMatchObject({ is_active: false, rollout_percentage: 0 });
    expect(await scheduleStatus(schedule.id)).toBe('paused');
    const rollbacks = (await auditOf(flag.id)).filter((e) => e.action === 'safety_rollback');
    expect(rollbacks).toEqual([expect.objectContaining({ actor_id: null, actor_username: 'system', details: expect.objectContaining({ automatic: true, error_rate: 1.2 }) })]);
    expect((await check(flag.id)).last_rollback_at).toBe(rolledBackAt);

    // The errors that caused it are behind the new window: turning the flag on again is not undone.
    await call('POST', `/api/v1/feature-flags/${flag.id}/activate`, dev.headers);
    await tick(1);
    expect((await readFlag(flag.id)).is_active).toBe(true);
    expect((await auditOf(flag.id)).filter((e) => e.action === 'safety_rollback')).toHaveLength(1);
  });

  it('ignores uncounted reports, disabled configs, and everything while automatic rollback is off', async () => {
    const [noisy, unmonitored, paused] = [await createFlag(), await createFlag(), await createFlag()];
    await configure(noisy.id, { enabled: true, metrics: { error_rate_threshold: 1 } });
    await configure(unmonitored.id, { enabled: false, metrics: { error_rate_threshold: 1 } });
    await configure(paused.id, { enabled: true, metrics: { error_rate_threshold: 1 } });
    await reportErrors(plain, noisy.key, 50);
    await reportErrors(analystSdk, noisy.key, 50);
    await reportErrors(trusted, unmonitored.key, 50);
    await call('POST', '/api/v1/safety/settings', root.headers, { auto_rollback_enabled: false });
    await reportErrors(trusted, paused.key, 50);
    expect(await check(paused.id)).toMatchObject({ threshold_exceeded: true, would_roll_back: false, auto_rollback_enabled: false });
    await tick(1);
    for (const flag of [noisy, unmonitored, paused]) expect(await readFlag(flag.id)).toMatchObject({ is_active: true, rollout_percentage: 50 });
    await call('POST', '/api/v1/safety/settings', root.headers, { auto_rollback_enabled: true });
    await tick(1);
    expect(await readFlag(paused.id)).toMatchObject({ is_active: false });
    expect(await readFlag(noisy.id)).toMatchObject({ is_active: true });
  });
});

