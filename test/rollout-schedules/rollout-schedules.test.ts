import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLLOUT_SCHEDULE_STATUSES } from '../../src/db/schema/rollout-schedules.js';
import { FLAG_NOT_FOUND } from '../../src/modules/feature-flags/service.js';
import { firstOutOfOrder, TRANSITIONS } from '../../src/modules/rollout-schedules/lifecycle.js';
import {
  ACTIVE_CANNOT_DELETE, ADVANCE_NEEDS_ACTIVE, ANOTHER_ACTIVE, LAST_PENDING_STAGE, NO_PENDING_STAGE, NOT_NEXT_STAGE, SCHEDULE_CLOSED,
  SCHEDULE_NOT_FOUND, STAGE_APPLIED, STAGE_NOT_FOUND, TIME_IN_PAST, TIMES_OUT_OF_ORDER, TOO_MANY_STAGES,
} from '../../src/modules/rollout-schedules/service.js';
import { fixedClock } from '../../src/platform/clock.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

type Json = Record<string, any>;
const MINUTE = 60_000;
const clock = fixedClock(new Date('2031-07-01T10:00:00.000Z'));
const BASE = '/api/v1/rollout-schedules';
const MISSING_ID = '00000000-0000-4000-8000-000000000000';

let t: TestApp;
let admin: TestUser;
let dev: TestUser;
let analyst: TestUser;
let viewer: TestUser;
let root: TestUser;

beforeAll(async () => {
  // The clock moves hours during the file: tokens must outlive it.
  t = await testApp({ clock, env: { ACCESS_TOKEN_EXPIRE_MINUTES: '525600' } });
  [admin, dev, analyst, viewer, root] = await Promise.all([
    t.user({ role: 'ADMIN' }), t.user({ role: 'DEVELOPER' }), t.user({ role: 'ANALYST' }), t.user({ role: 'VIEWER' }), t.user({ superuser: true }),
  ]);
});
afterAll(() => t.close());

/** Minutes from the clock's current time, as sent on the wire. */
const inMinutes = (minutes: number) => new Date(clock.now().getTime() + minutes * MINUTE).toISOString();
/** Moves the clock on and runs the scheduler at the new time (every job is due: a tick is at least a minute). */
async function tick(minutes: number): Promise<void> {
  clock.advance(minutes * MINUTE);
  await t.services.scheduler.runDue(clock.now());
}

async function createFlag(body: Json = {}): Promise<Json> {
  const res = await t.inject({ method: 'POST', url: '/api/v1/feature-flags/', headers: dev.headers, payload: { key: t.unique('flag'), name: 'Flag', ...body } });
  if (res.statusCode !== 201) throw new Error(`create flag: ${res.statusCode} ${res.body}`);
  return res.json();
}
const readFlag = async (id: string) => (await t.inject({ method: 'GET', url: `/api/v1/feature-flags/${id}`, headers: viewer.headers })).json();

async function createSchedule(body: Json = {}, user: TestUser = dev): Promise<Json> {
  const flagId = body.flag_id ?? (await createFlag({ is_active: true })).id;
  const res = await t.inject({ method: 'POST', url: `${BASE}/`, headers: user.headers, payload: { name: 'Ramp', ...body, flag_id: flagId } });
  if (res.statusCode !== 201) throw new Error(`create schedule: ${res.statusCode} ${res.body}`);
  return res.json();
}
/** Each call a millisecond after the last, so audit entries sort in the order they were made. */
function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, user: TestUser | null = dev, payload?: Json) {
  clock.advance(1);
  return t.inject({ method, url, ...(user ? { headers: user.headers } : {}), ...(payload === undefined ? {} : { payload }) });
}
const read = async (id: string) => (await call('GET', `${BASE}/${id}`, viewer)).json();
const act = (id: string, action: string, user: TestUser = dev) => call('POST', `${BASE}/${id}/${action}`, user);
const schedulesOfFlag = async (flagId: string) => (await call('GET', `${BASE}/?flag_id=${flagId}`, viewer)).json().total as number;

async function auditOf(entityId: string): Promise<Array<{ action: string; actor_id: string | null; actor_username: string | null; details: Json | null }>> {
  return t.database.session((exec) =>
    // The test clock is fixed, so entries written in one transaction share their instant and nothing else orders them
    // (ids are random); among those, the schedule's end (written after the stage that ends it) comes last.
    exec(
      `SELECT action, actor_id, actor_username, details FROM audit_logs WHERE entity_id = $1
       ORDER BY created_at, action = 'rollout_schedule_complete'`,
      [entityId],
    ),
  );
}

describe('create, read, list', () => {
  it('creates a draft with its stages in order, owned by the caller, and records it', async () => {
    const flag = await createFlag();
    const at = inMinutes(10);
    const res = await call('POST', `${BASE}/`, dev, {
      flag_id: flag.id, name: 'Checkout ramp', description: 'Slowly',
      stages: [{ percentage: 10, scheduled_at: at }, { percentage: 50 }, { percentage: 100, scheduled_at: null }],
    });
    expect(res.statusCode).toBe(201);
    const s = res.json();
    expect(s).toEqual({
      id: expect.any(String), flag_id: flag.id, name: 'Checkout ramp', description: 'Slowly', status: 'draft', owner_id: dev.id,
      stages: [
        { id: expect.any(String), position: 1, percentage: 10, scheduled_at: at, status: 'pending', applied_at: null },
        { id: expect.any(String), position: 2, percentage: 50, scheduled_at: null, status: 'pending', applied_at: null },
        { id: expect.any(String), position: 3, percentage: 100, scheduled_at: null, status: 'pending', applied_at: null },
      ],
      created_at: clock.now().toISOString(), updated_at: clock.now().toISOString(), guardrails: null, decisions: [],
    });
    expect(await read(s.id)).toEqual(s);
    expect((await auditOf(s.id)).map((e) => e.action)).toEqual(['rollout_schedule_create']);
  });

  it('needs a sign-in and the ADMIN or DEVELOPER role; admins may create', async () => {
    const flag = await createFlag();
    const body = { flag_id: flag.id, name: 'x' };
    expect((await call('POST', `${BASE}/`, null, body)).statusCode).toBe(401);
    for (const user of [analyst, viewer]) expect((await call('POST', `${BASE}/`, user, body)).statusCode).toBe(403);
    expect(await schedulesOfFlag(flag.id)).toBe(0);
    expect((await call('POST', `${BASE}/`, admin, body)).statusCode).toBe(201);
  });

  it('answers 404 for an unknown flag and creates nothing', async () => {
    const res = await call('POST', `${BASE}/`, dev, { flag_id: MISSING_ID, name: 'x' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: FLAG_NOT_FOUND });
    expect(await schedulesOfFlag(MISSING_ID)).toBe(0);
  });

  it('refuses invalid bodies with 422 at the field, and creates nothing', async () => {
    const flag = await createFlag();
    const cases: Array<[Json, Json]> = [
      [{ name: 'x', extra: 1 }, { type: 'extra_forbidden', loc: ['body', 'extra'] }],
      [{}, { type: 'missing', loc: ['body', 'name'] }],
      [{ name: null }, { type: 'null_not_allowed', loc: ['body', 'name'] }],
      [{ name: 'x', stages: [{ percentage: 101 }] }, { type: 'less_than_equal', loc: ['body', 'stages', 0, 'percentage'] }],
      [{ name: 'x', stages: [{ percentage: 5.5 }] }, { type: 'int_parsing', loc: ['body', 'stages', 0, 'percentage'] }],
      [{ name: 'x', stages: [{ percentage: 5, scheduled_at: 'soon' }] }, { type: 'datetime_from_date_parsing', loc: ['body', 'stages', 0, 'scheduled_at'] }],
      [{ name: 'x', stages: Array.from({ length: 51 }, () => ({ percentage: 1 })) }, { type: 'too_long', loc: ['body', 'stages'] }],
      [
        { name: 'x', stages: [{ percentage: 5 }, { percentage: 10, scheduled_at: inMinutes(0) }] },
        { type: 'value_error', loc: ['body', 'stages', 1, 'scheduled_at'], msg: TIME_IN_PAST },
      ],
      [
        { name: 'x', stages: [{ percentage: 5, scheduled_at: inMinutes(30) }, { percentage: 10 }, { percentage: 20, scheduled_at: inMinutes(20) }] },
        { type: 'value_error', loc: ['body', 'stages', 2, 'scheduled_at'], msg: TIMES_OUT_OF_ORDER },
      ],
    ];
    for (const [body, issue] of cases) {
      const res = await call('POST', `${BASE}/`, dev, { flag_id: flag.id, ...body });
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(res.json().detail[0]).toMatchObject(issue);
    }
    expect((await call('POST', `${BASE}/`, dev, { flag_id: 'nope', name: 'x' })).json().detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['body', 'flag_id'] });
    expect(await schedulesOfFlag(flag.id)).toBe(0);
  });

  it('lists newest first with total, filtered by flag and status, for every role', async () => {
    const flag = await createFlag();
    const first = await createSchedule({ flag_id: flag.id, stages: [{ percentage: 10 }] });
    clock.advance(1000);
    const second = await createSchedule({ flag_id: flag.id });
    await act(first.id, 'activate');
    const all = await call('GET', `${BASE}/?flag_id=${flag.id}`, viewer);
    expect(all.statusCode).toBe(200);
    expect(all.json()).toMatchObject({ total: 2, skip: 0, limit: 100, items: [{ id: second.id }, { id: first.id, status: 'active' }] });
    const active = (await call('GET', `${BASE}/?flag_id=${flag.id}&status=active&limit=1`, analyst)).json();
    expect(active).toMatchObject({ total: 1, limit: 1, items: [{ id: first.id }] });
    const page = (await call('GET', `${BASE}/?flag_id=${flag.id}&skip=1&limit=1`, viewer)).json();
    expect(page).toMatchObject({ total: 2, items: [{ id: first.id }] });
    expect((await call('GET', `${BASE}/?status=running`, viewer)).json().detail[0]).toMatchObject({ type: 'enum', loc: ['query', 'status'] });
    expect((await call('GET', `${BASE}/?limit=501`, viewer)).statusCode).toBe(422);
    expect((await call('GET', `${BASE}/`, null)).statusCode).toBe(401);
  });

  it('reads one schedule: 404 unknown, 422 not a UUID, 401 signed out', async () => {
    expect((await call('GET', `${BASE}/${MISSING_ID}`, viewer)).json()).toEqual({ detail: SCHEDULE_NOT_FOUND });
    expect((await call('GET', `${BASE}/${MISSING_ID}`, viewer)).statusCode).toBe(404);
    expect((await call('GET', `${BASE}/abc`, viewer)).json().detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'schedule_id'] });
    expect((await call('GET', `${BASE}/${MISSING_ID}`, null)).statusCode).toBe(401);
  });
});

describe('update and delete', () => {
  it('changes name and description with an audit entry; null name is refused, null description clears it', async () => {
    const s = await createSchedule({ description: 'old' });
    const res = await call('PUT', `${BASE}/${s.id}`, admin, { name: 'New', description: null });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'New', description: null });
    const refused = await call('PUT', `${BASE}/${s.id}`, dev, { name: null });
    expect(refused.json().detail[0]).toMatchObject({ type: 'null_not_allowed', loc: ['body', 'name'] });
    expect((await call('PUT', `${BASE}/${s.id}`, dev, { status: 'active' })).json().detail[0]).toMatchObject({ type: 'extra_forbidden' });
    expect((await call('PUT', `${BASE}/${s.id}`, viewer, { name: 'V' })).statusCode).toBe(403);
    expect((await call('PUT', `${BASE}/${MISSING_ID}`, dev, { name: 'V' })).statusCode).toBe(404);
    expect(await read(s.id)).toMatchObject({ name: 'New', description: null, status: 'draft' });
    expect((await auditOf(s.id)).map((e) => e.action)).toEqual(['rollout_schedule_create', 'rollout_schedule_update']);
  });

  it('deletes a schedule that is not active; an active one is 409 and kept', async () => {
    const s = await createSchedule({ stages: [{ percentage: 10 }] });
    await act(s.id, 'activate');
    const refused = await call('DELETE', `${BASE}/${s.id}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ detail: ACTIVE_CANNOT_DELETE });
    expect((await read(s.id)).status).toBe('active');
    expect((await call('DELETE', `${BASE}/${s.id}`, analyst)).statusCode).toBe(403);
    await act(s.id, 'pause');
    expect((await call('DELETE', `${BASE}/${s.id}`)).statusCode).toBe(204);
    expect((await call('GET', `${BASE}/${s.id}`, viewer)).statusCode).toBe(404);
    expect((await call('DELETE', `${BASE}/${s.id}`)).statusCode).toBe(404);
    expect((await auditOf(s.id)).map((e) => e.action)).toContain('rollout_schedule_delete');
  });

  it("keeps a schedule with owner_id null when its owner's account is deleted (user rule 8)", async () => {
    const owner = await t.user({ role: 'DEVELOPER' });
    const s = await createSchedule({}, owner);
    expect(s.owner_id).toBe(owner.id);
    expect((await call('DELETE', `/api/v1/users/${owner.id}`, root)).statusCode).toBe(204);
    expect(await read(s.id)).toMatchObject({ id: s.id, owner_id: null, name: 'Ramp' });
  });

  it('keeps nothing of a flag that is deleted: its schedules go with it', async () => {
    const flag = await createFlag();
    const s = await createSchedule({ flag_id: flag.id });
    expect((await call('DELETE', `/api/v1/feature-flags/${flag.id}`)).statusCode).toBe(204);
    expect((await call('GET', `${BASE}/${s.id}`, viewer)).statusCode).toBe(404);
  });
});

describe('status transitions', () => {
  it('runs draft -> active -> paused -> active -> cancelled, each once audited; repeats change nothing', async () => {
    const s = await createSchedule({ stages: [{ percentage: 10 }] });
    expect((await act(s.id, 'activate')).json().status).toBe('active');
    expect((await act(s.id, 'activate')).json().status).toBe('active');
    expect((await act(s.id, 'pause')).json().status).toBe('paused');
    expect((await act(s.id, 'pause')).json().status).toBe('paused');
    expect((await act(s.id, 'activate', admin)).json().status).toBe('active');
    expect((await act(s.id, 'cancel')).json().status).toBe('cancelled');
    expect((await act(s.id, 'cancel')).json().status).toBe('cancelled');
    const actions = (await auditOf(s.id)).map((e) => e.action);
    expect(actions).toEqual([
      'rollout_schedule_create', 'rollout_schedule_activate', 'rollout_schedule_pause', 'rollout_schedule_activate', 'rollout_schedule_cancel',
    ]);
  });

  it('refuses what the transition table does not allow, with 409 and no change', async () => {
    const s = await createSchedule({ stages: [{ percentage: 10 }] });
    const paused = await act(s.id, 'pause');
    expect(paused.statusCode).toBe(409);
    expect(paused.json()).toEqual({ detail: 'A draft schedule cannot be paused.' });
    await act(s.id, 'cancel');
    for (const [action, verb] of [['activate', 'activated'], ['pause', 'paused']]) {
      const res = await act(s.id, action);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ detail: `A cancelled schedule cannot be ${verb}.` });
    }
    expect((await read(s.id)).status).toBe('cancelled');
    expect((await call('PUT', `${BASE}/${s.id}`, dev, { name: 'late' })).json()).toEqual({ detail: SCHEDULE_CLOSED });
    expect((await call('POST', `${BASE}/${s.id}/stages`, dev, { percentage: 5 })).json()).toEqual({ detail: SCHEDULE_CLOSED });
  });

  it('activates only with a pending stage', async () => {
    const s = await createSchedule();
    const res = await act(s.id, 'activate');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: NO_PENDING_STAGE });
    expect((await read(s.id)).status).toBe('draft');
  });

  it('keeps one active schedule per flag, also when two are activated at once', async () => {
    const flag = await createFlag();
    const [a, b] = [await createSchedule({ flag_id: flag.id, stages: [{ percentage: 10 }] }), await createSchedule({ flag_id: flag.id, stages: [{ percentage: 20 }] })];
    const results = await Promise.all([act(a.id, 'activate'), act(b.id, 'activate')]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(results.find((r) => r.statusCode === 409)!.json()).toEqual({ detail: ANOTHER_ACTIVE });
    const listed = (await call('GET', `${BASE}/?flag_id=${flag.id}&status=active`, viewer)).json();
    expect(listed.total).toBe(1);
  });

  it('needs ADMIN or DEVELOPER, knows unknown ids, and checks the path', async () => {
    const s = await createSchedule({ stages: [{ percentage: 10 }] });
    expect((await act(s.id, 'activate', viewer)).statusCode).toBe(403);
    expect((await call('POST', `${BASE}/${s.id}/activate`, null)).statusCode).toBe(401);
    expect((await act(MISSING_ID, 'cancel')).statusCode).toBe(404);
    expect((await act('x', 'pause')).statusCode).toBe(422);
    expect((await read(s.id)).status).toBe('draft');
  });
});

describe('stages', () => {
  it('adds, updates and deletes pending stages, each with an audit entry', async () => {
    const s = await createSchedule({ stages: [{ percentage: 10, scheduled_at: inMinutes(10) }] });
    const at = inMinutes(20);
    const added = await call('POST', `${BASE}/${s.id}/stages`, dev, { percentage: 30, scheduled_at: at });
    expect(added.statusCode).toBe(201);
    const stage = added.json().stages[1];
    expect(stage).toMatchObject({ position: 2, percentage: 30, scheduled_at: at, status: 'pending' });
    const updated = await call('PUT', `${BASE}/stages/${stage.id}`, admin, { percentage: 40, scheduled_at: null });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().stages[1]).toMatchObject({ id: stage.id, percentage: 40, scheduled_at: null });
    expect((await call('DELETE', `${BASE}/stages/${stage.id}`)).statusCode).toBe(204);
    expect((await read(s.id)).stages.map((x: Json) => x.percentage)).toEqual([10]);
    expect((await auditOf(s.id)).map((e) => e.action)).toEqual([
      'rollout_schedule_create', 'rollout_stage_add', 'rollout_stage_update', 'rollout_stage_delete',
    ]);
  });

  it('refuses bad stage changes with 422 and changes nothing', async () => {
    const s = await createSchedule({ stages: [{ percentage: 10, scheduled_at: inMinutes(10) }, { percentage: 20, scheduled_at: inMinutes(20) }] });
    const [first, second] = s.stages;
    const cases: Array<[string, string, Json, Json]> = [
      ['POST', `${BASE}/${s.id}/stages`, { percentage: 30, scheduled_at: inMinutes(-1) }, { loc: ['body', 'scheduled_at'], msg: TIME_IN_PAST }],
      ['POST', `${BASE}/${s.id}/stages`, { percentage: 30, scheduled_at: inMinutes(15) }, { loc: ['body', 'scheduled_at'], msg: TIMES_OUT_OF_ORDER }],
      ['PUT', `${BASE}/stages/${first.id}`, { scheduled_at: inMinutes(25) }, { loc: ['body', 'scheduled_at'], msg: TIMES_OUT_OF_ORDER }],
      ['POST', `${BASE}/${s.id}/stages`, { percentage: -1 }, { type: 'greater_than_equal', loc: ['body', 'percentage'] }],
      ['POST', `${BASE}/${s.id}/stages`, {}, { type: 'missing', loc: ['body', 'percentage'] }],
      ['PUT', `${BASE}/stages/${second.id}`, { percentage: null }, { type: 'null_not_allowed', loc: ['body', 'percentage'] }],
      ['PUT', `${BASE}/stages/${second.id}`, { position: 1 }, { type: 'extra_forbidden', loc: ['body', 'position'] }],
    ];
    for (const [method, url, body, issue] of cases) {
      const res = await call(method as 'POST', url, dev, body);
      expect(res.statusCode, `${method} ${JSON.stringify(body)}`).toBe(422);
      expect(res.json().detail[0]).toMatchObject(issue);
    }
    expect((await read(s.id)).stages).toEqual(s.stages);
  });

  it('holds at most 50 stages', async () => {
    const s = await createSchedule({ stages: Array.from({ length: 50 }, (_, i) => ({ percentage: i + 1 })) });
    const res = await call('POST', `${BASE}/${s.id}/stages`, dev, { percentage: 100 });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual([{ type: 'value_error', loc: ['body'], msg: TOO_MANY_STAGES }]);
    expect((await read(s.id)).stages).toHaveLength(50);
  });

  it('answers 404 for unknown stages and 403 for readers', async () => {
    expect((await call('PUT', `${BASE}/stages/${MISSING_ID}`, dev, { percentage: 5 })).json()).toEqual({ detail: STAGE_NOT_FOUND });
    expect((await call('DELETE', `${BASE}/stages/${MISSING_ID}`)).statusCode).toBe(404);
    expect((await call('POST', `${BASE}/stages/${MISSING_ID}/advance`)).statusCode).toBe(404);
    expect((await call('POST', `${BASE}/${MISSING_ID}/stages`, dev, { percentage: 5 })).json()).toEqual({ detail: SCHEDULE_NOT_FOUND });
    const s = await createSchedule({ stages: [{ percentage: 10 }] });
    const stage = s.stages[0];
    expect((await call('PUT', `${BASE}/stages/${stage.id}`, viewer, { percentage: 5 })).statusCode).toBe(403);
    expect((await call('DELETE', `${BASE}/stages/${stage.id}`, analyst)).statusCode).toBe(403);
    expect((await call('POST', `${BASE}/stages/${stage.id}/advance`, viewer)).statusCode).toBe(403);
    expect((await call('POST', `${BASE}/${s.id}/stages`, viewer, { percentage: 5 })).statusCode).toBe(403);
    expect((await call('POST', `${BASE}/${s.id}/stages`, null, { percentage: 5 })).statusCode).toBe(401);
    expect((await read(s.id)).stages).toEqual(s.stages);
  });

  it('keeps a pending stage in an active schedule', async () => {
    const s = await createSchedule({ stages: [{ percentage: 10 }] });
    await act(s.id, 'activate');
    const res = await call('DELETE', `${BASE}/stages/${s.stages[0].id}`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: LAST_PENDING_STAGE });
    expect((await read(s.id)).stages).toHaveLength(1);
  });
});

describe('advance', () => {
  it('applies the next stage to the flag, refuses the others, and completes after the last', async () => {
    const flag = await createFlag({ is_active: true });
    const s = await createSchedule({ flag_id: flag.id, stages: [{ percentage: 25 }, { percentage: 60, scheduled_at: inMinutes(60) }] });
    const [first, second] = s.stages;
    const draft = await call('POST', `${BASE}/stages/${first.id}/advance`);
    expect(draft.statusCode).toBe(409);
    expect(draft.json()).toEqual({ detail: ADVANCE_NEEDS_ACTIVE });
    await act(s.id, 'activate');
    const early = await call('POST', `${BASE}/stages/${second.id}/advance`);
    expect(early.json()).toEqual({ detail: NOT_NEXT_STAGE });
    expect((await readFlag(flag.id)).rollout_percentage).toBe(0);

    const res = await call('POST', `${BASE}/stages/${first.id}/advance`, admin);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'active', stages: [{ status: 'applied', applied_at: clock.now().toISOString() }, { status: 'pending' }] });
    expect((await readFlag(flag.id)).rollout_percentage).toBe(25);
    const again = await call('POST', `${BASE}/stages/${first.id}/advance`);
    expect(again.json()).toEqual({ detail: STAGE_APPLIED });
    expect((await call('PUT', `${BASE}/stages/${first.id}`, dev, { percentage: 1 })).json()).toEqual({ detail: STAGE_APPLIED });
    expect((await call('DELETE', `${BASE}/stages/${first.id}`)).json()).toEqual({ detail: STAGE_APPLIED });

    // A timed stage may be advanced before its time.
    const last = await call('POST', `${BASE}/stages/${second.id}/advance`);
    expect(last.json()).toMatchObject({ status: 'completed', stages: [{ status: 'applied' }, { status: 'applied' }] });
    expect((await readFlag(flag.id)).rollout_percentage).toBe(60);
    expect((await act(s.id, 'cancel')).json()).toEqual({ detail: 'A completed schedule cannot be cancelled.' });

    const flagAudit = (await auditOf(flag.id)).filter((e) => e.action === 'feature_flag_update');
    expect(flagAudit.map((e) => e.details)).toEqual([
      { rollout_schedule_id: s.id, rollout_stage_id: first.id, automatic: false },
      { rollout_schedule_id: s.id, rollout_stage_id: second.id, automatic: false },
    ]);
    expect((await auditOf(s.id)).map((e) => e.action).slice(-3)).toEqual(['rollout_stage_advance', 'rollout_stage_advance', 'rollout_schedule_complete']);
  });

  it('refuses to advance a paused schedule', async () => {
    const s = await createSchedule({ stages: [{ percentage: 10 }] });
    await act(s.id, 'activate');
    await act(s.id, 'pause');
    const res = await call('POST', `${BASE}/stages/${s.stages[0].id}/advance`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: ADVANCE_NEEDS_ACTIVE });
    expect((await read(s.id)).stages[0].status).toBe('pending');
  });
});

describe('the scheduler', () => {
  it('applies timed stages when due, as the system, waits at manual stages and completes the schedule', async () => {
    const flag = await createFlag({ is_active: true });
    const s = await createSchedule({
      flag_id: flag.id,
      stages: [{ percentage: 10, scheduled_at: inMinutes(10) }, { percentage: 30, scheduled_at: inMinutes(20) }, { percentage: 50 }, { percentage: 100, scheduled_at: inMinutes(30) }],
    });
    await tick(15);
    expect((await readFlag(flag.id)).rollout_percentage).toBe(0);
    await act(s.id, 'activate');
    // Both overdue stages are applied in order in one run.
    await tick(10);
    expect((await read(s.id)).stages.map((x: Json) => x.status)).toEqual(['applied', 'applied', 'pending', 'pending']);
    expect((await readFlag(flag.id)).rollout_percentage).toBe(30);
    // The manual stage holds back the later timed stage, though its time has passed.
    await tick(10);
    expect((await readFlag(flag.id)).rollout_percentage).toBe(30);
    await call('POST', `${BASE}/stages/${s.stages[2].id}/advance`);
    expect((await readFlag(flag.id)).rollout_percentage).toBe(50);
    await tick(1);
    expect(await read(s.id)).toMatchObject({ status: 'completed' });
    expect((await readFlag(flag.id)).rollout_percentage).toBe(100);

    const system = (await auditOf(s.id)).filter((e) => e.actor_username === 'system');
    // Entries of one run share their time, so their order is not asserted.
    expect(system.map((e) => e.action).sort()).toEqual(['rollout_schedule_complete', 'rollout_stage_advance', 'rollout_stage_advance', 'rollout_stage_advance']);
    expect(system.every((e) => e.actor_id === null)).toBe(true);
    expect(system.filter((e) => e.action === 'rollout_stage_advance').map((e) => e.details?.percentage).sort((a, b) => a - b)).toEqual([10, 30, 100]);
    expect(system.every((e) => e.action !== 'rollout_stage_advance' || e.details?.automatic === true)).toBe(true);
  });

  it('leaves paused and draft schedules alone', async () => {
    const flag = await createFlag({ is_active: true });
    const s = await createSchedule({ flag_id: flag.id, stages: [{ percentage: 40, scheduled_at: inMinutes(5) }] });
    await act(s.id, 'activate');
    await act(s.id, 'pause');
    const draft = await createSchedule({ stages: [{ percentage: 40, scheduled_at: inMinutes(5) }] });
    await tick(10);
    expect((await readFlag(flag.id)).rollout_percentage).toBe(0);
    expect((await read(draft.id)).stages[0].status).toBe('pending');
    await act(s.id, 'activate');
    await tick(1);
    expect((await readFlag(flag.id)).rollout_percentage).toBe(40);
  });
});

describe('pure rules', () => {
  const statuses = fc.constantFrom(...ROLLOUT_SCHEDULE_STATUSES);
  const actions = fc.constantFrom('activate', 'pause', 'cancel' as const);

  it('never leaves completed, never leaves cancelled for another state, and never reaches completed by a user action', () => {
    fc.assert(fc.property(statuses, actions, (status, action) => {
      const next = TRANSITIONS[action][status];
      if (status === 'completed') expect(next).toBeUndefined();
      if (status === 'cancelled' && next) expect(next).toBe('cancelled');
      expect(next).not.toBe('completed');
      if (next) expect(ROLLOUT_SCHEDULE_STATUSES).toContain(next);
    }));
  });

  it('finds a time-order violation exactly when the timed stages are not sorted', () => {
    const times = fc.array(fc.option(fc.integer({ min: 0, max: 1000 }).map((n) => new Date(n * MINUTE)), { nil: null }), { maxLength: 12 });
    fc.assert(fc.property(times, (list) => {
      const timed = list.filter((d): d is Date => d !== null).map((d) => d.getTime());
      const sorted = timed.every((v, i) => i === 0 || timed[i - 1] <= v);
      const i = firstOutOfOrder(list);
      expect(i === -1).toBe(sorted);
      if (i >= 0) {
        const before = list.slice(0, i).filter((d): d is Date => d !== null).map((d) => d.getTime());
        expect(list[i]!.getTime()).toBeLessThan(Math.max(...before));
      }
    }));
  });
});
