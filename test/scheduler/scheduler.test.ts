import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpliftApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { fixedClock } from '../../src/platform/clock.js';
import { SCHEDULER_ALERT_CHANNEL } from '../../src/platform/scheduler.js';
import { JOB_NOT_FOUND } from '../../src/modules/scheduler/service.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

const NOW = new Date('2031-06-01T09:00:00.000Z');
const clock = fixedClock(NOW);
const MINUTE = 60_000;
const JOBS = ['experiment-auto-start', 'experiment-auto-complete'];

let t: TestApp;
let other: UpliftApp;
let dev: TestUser;
let admin: TestUser;
/** Each tick of a test is a minute after the last one, so every job is due again. */
let tick = NOW.getTime();
const nextTick = () => new Date((tick += MINUTE));

beforeAll(async () => {
  t = await testApp({ clock });
  other = await t.spawn({}, clock);
  [dev, admin] = await Promise.all([t.user({ role: 'DEVELOPER' }), t.user({ role: 'ADMIN' })]);
});
afterAll(() => t.close());

type Json = Record<string, any>;

async function draft(): Promise<Json> {
  const res = await t.inject({
    method: 'POST',
    url: '/api/v1/experiments/',
    headers: dev.headers,
    payload: {
      name: 'Scheduled',
      key: t.unique('sched'),
      variants: [{ name: 'control', is_control: true, traffic_allocation: 100 }],
      metrics: [{ name: 'm', event_name: 'e' }],
    },
  });
  expect(res.statusCode).toBe(201);
  return res.json();
}

const schedule = (id: string, dates: Json) =>
  t.inject({ method: 'PUT', url: `/api/v1/experiments/${id}/schedule`, headers: dev.headers, payload: dates });
const read = async (id: string) => (await t.inject({ method: 'GET', url: `/api/v1/experiments/${id}`, headers: dev.headers })).json();
const history = async (name: string) =>
  (await t.inject({ method: 'GET', url: `/api/v1/scheduler/${name}/history?limit=500`, headers: dev.headers })).json() as Json[];

async function auditOf(id: string): Promise<Array<{ action: string; actor_id: string | null; actor_username: string }>> {
  return t.database.session((exec) => exec('SELECT action, actor_id, actor_username FROM audit_logs WHERE entity_id = $1 ORDER BY action', [id]));
}

describe('experiment jobs', () => {
  it('starts a draft once its start_date has come, keeping the start_date, as system', async () => {
    const e = await draft();
    const start = new Date(tick + 30 * MINUTE).toISOString();
    expect((await schedule(e.id, { start_date: start })).statusCode).toBe(200);
    expect(await t.services.scheduler.runDue(nextTick())).toEqual(expect.arrayContaining(JOBS));
    expect((await read(e.id)).status).toBe('draft');
    tick += 30 * MINUTE;
    await t.services.scheduler.runDue(nextTick());
    expect(await read(e.id)).toMatchObject({ status: 'active', start_date: start.replace('Z', '000Z') });
    expect(await auditOf(e.id)).toContainEqual({ action: 'experiment_start', actor_id: null, actor_username: 'system' });
  });

  it('completes active experiments whose end_date passed, at that end_date, and leaves paused ones', async () => {
    const active = await draft();
    const paused = await draft();
    const end = new Date(tick + 5 * MINUTE).toISOString();
    for (const e of [active, paused]) {
      await t.inject({ method: 'POST', url: `/api/v1/experiments/${e.id}/start`, headers: dev.headers });
      expect((await schedule(e.id, { end_date: end })).statusCode).toBe(200);
    }
    await t.inject({ method: 'POST', url: `/api/v1/experiments/${paused.id}/pause`, headers: dev.headers });
    tick += 10 * MINUTE;
    await t.services.scheduler.runDue(nextTick());
    expect(await read(active.id)).toMatchObject({ status: 'completed', end_date: end.replace('Z', '000Z') });
    expect(await auditOf(active.id)).toContainEqual({ action: 'experiment_complete', actor_id: null, actor_username: 'system' });
    expect((await read(paused.id)).status).toBe('paused');
  });

  it('runs each job once per tick when two API processes tick together, and not again within its interval', async () => {
    const e = await draft();
    await schedule(e.id, { start_date: new Date(tick).toISOString() });
    const runsBefore = (await history('experiment-auto-start')).length;
    const now = nextTick();
    const [mine, theirs] = await Promise.all([t.services.scheduler.runDue(now), other.services.scheduler.runDue(now)]);
    const ran = [...mine, ...theirs];
    expect(new Set(ran).size).toBe(ran.length);
    expect(ran).toEqual(expect.arrayContaining(JOBS));
    expect((await history('experiment-auto-start')).length).toBe(runsBefore + 1);
    expect((await auditOf(e.id)).filter((a) => a.action === 'experiment_start')).toHaveLength(1);
    expect((await read(e.id)).status).toBe('active');

    const [again, againOther] = await Promise.all([
      t.services.scheduler.runDue(new Date(tick + 30_000)),
      other.services.scheduler.runDue(new Date(tick + 30_000)),
    ]);
    expect([...again, ...againOther]).toEqual([]);
  });

  // PGlite has one session, where advisory locks are re-entrant; the leader lock is visible only on a server.
  it.runIf(process.env.TEST_DATABASE_URL)('runs nothing while another process holds the leader lock', async () => {
    await t.database.session(async (exec) => {
      await exec('SELECT pg_advisory_lock(7301002, hashtext(current_schema()))');
      try {
        expect(await t.services.scheduler.runDue(nextTick())).toEqual([]);
      } finally {
        await exec('SELECT pg_advisory_unlock(7301002, hashtext(current_schema()))');
      }
    });
    expect(await t.services.scheduler.runDue(new Date(tick))).toEqual(expect.arrayContaining(JOBS));
  });

  it.runIf(process.env.TEST_DATABASE_URL)('runs its jobs while the leader of another schema of the database holds its lock', async () => {
    // Advisory locks are per database: a leader lock keyed by a number alone let one schema's ticks (another
    // deployment, or another test file running at once) stop every other schema's.
    await t.database.session(async (exec) => {
      await exec("SELECT pg_advisory_lock(7301002), pg_advisory_lock(7301002, hashtext('elsewhere'))");
      try {
        expect(await t.services.scheduler.runDue(nextTick())).toEqual(expect.arrayContaining(JOBS));
      } finally {
        await exec("SELECT pg_advisory_unlock(7301002), pg_advisory_unlock(7301002, hashtext('elsewhere'))");
      }
    });
  });
});

describe('health routes', () => {
  it('reports each job with its last run, outcome and duration', async () => {
    await t.services.scheduler.runDue(nextTick());
    const res = await t.inject({ method: 'GET', url: '/api/v1/scheduler/health', headers: dev.headers });
    expect(res.statusCode).toBe(200);
    const health = res.json();
    expect(health.loop_enabled).toBe(false);
    const mine = health.jobs.filter((j: Json) => JOBS.includes(j.name));
    expect(mine.map((j: Json) => j.name)).toEqual(JOBS);
    for (const job of mine) {
      expect(job).toMatchObject({ interval_seconds: 60, status: 'ok', last_run: { job_name: job.name, outcome: 'ok', error: null } });
      expect(job.last_run.duration_ms).toBeGreaterThanOrEqual(0);
    }
    const one = await t.inject({ method: 'GET', url: `/api/v1/scheduler/health/${JOBS[0]}`, headers: dev.headers });
    expect(one.json()).toEqual(mine[0]);
    const runs = await history(JOBS[0]);
    expect(runs[0]).toEqual(mine[0].last_run);
    expect(runs.map((r) => r.started_at)).toEqual([...runs.map((r) => r.started_at)].sort().reverse());
    const page = await t.inject({ method: 'GET', url: `/api/v1/scheduler/${JOBS[0]}/history?skip=1&limit=1`, headers: dev.headers });
    expect(page.json()).toEqual([runs[1]]);
  });

  it('answers 401, 404 for an unknown job and 422 for bad paging', async () => {
    expect((await t.inject({ method: 'GET', url: '/api/v1/scheduler/health' })).statusCode).toBe(401);
    for (const url of ['/api/v1/scheduler/health/nope', '/api/v1/scheduler/nope/history']) {
      const res = await t.inject({ method: 'GET', url, headers: dev.headers });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: JOB_NOT_FOUND });
    }
    for (const query of ['limit=0', 'limit=501', 'skip=-1']) {
      expect((await t.inject({ method: 'GET', url: `/api/v1/scheduler/${JOBS[0]}/history?${query}`, headers: dev.headers })).statusCode).toBe(422);
    }
  });

  it('records a failed run, reports the job as error and the scheduler as degraded', async () => {
    other.services.scheduler.register('always-fails', 60, async () => {
      throw new Error('warehouse unreachable');
    });
    expect(await other.services.scheduler.runDue(nextTick())).toContain('always-fails');
    const res = await other.app.inject({ method: 'GET', url: '/api/v1/scheduler/health', headers: dev.headers });
    expect(res.json().status).toBe('degraded');
    expect(res.json().jobs.find((j: Json) => j.name === 'always-fails')).toMatchObject({
      status: 'error',
      last_run: { outcome: 'error', error: 'warehouse unreachable' },
    });
  });

  it('reports a job stale when it has not run for three intervals', async () => {
    await t.services.scheduler.runDue(nextTick());
    clock.advance(4 * MINUTE);
    const res = await t.inject({ method: 'GET', url: `/api/v1/scheduler/health/${JOBS[1]}`, headers: dev.headers });
    expect(res.json().status).toBe('stale');
    expect((await t.inject({ method: 'GET', url: '/api/v1/scheduler/health', headers: dev.headers })).json().status).toBe('degraded');
  });

  it('sends a test alert for ADMIN only', async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/scheduler/notify/test', headers: admin.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'sent', channel: SCHEDULER_ALERT_CHANNEL });
    expect((await t.inject({ method: 'POST', url: '/api/v1/scheduler/notify/test', headers: dev.headers })).statusCode).toBe(403);
    expect((await t.inject({ method: 'POST', url: '/api/v1/scheduler/notify/test' })).statusCode).toBe(401);
  });
});

it('runs the loop by default and not under ENVIRONMENT=test unless SCHEDULER_ENABLED says so', () => {
  const secret = { SECRET_KEY: 'x'.repeat(40) };
  expect(loadConfig({ ...secret, ENVIRONMENT: 'production' }).schedulerEnabled).toBe(true);
  expect(loadConfig({ ...secret, ENVIRONMENT: 'production', SCHEDULER_ENABLED: 'off' }).schedulerEnabled).toBe(false);
  expect(loadConfig({ ENVIRONMENT: 'test' }).schedulerEnabled).toBe(false);
  expect(loadConfig({ ENVIRONMENT: 'test', SCHEDULER_ENABLED: 'true' }).schedulerEnabled).toBe(true);
  expect(() => loadConfig({ SCHEDULER_ENABLED: 'sometimes' })).toThrow('SCHEDULER_ENABLED');
});
