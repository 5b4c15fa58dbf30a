import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { analyseAndCheck, post } from './flow.js';
import { seedData, sqlTime } from './seed.js';

/**
 * The warehouse here is the machine's PostgreSQL (127.0.0.1:5432) whatever stores the platform's own data (PGlite
 * or PostgreSQL): the test creates a login role without superuser rights and a schema of seeded tables it may read,
 * with unique names so parallel runs do not collide, and drops both at the end.
 */
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const target = new URL(ADMIN_URL);
const suffix = randomUUID().replace(/-/g, '').slice(0, 12);
const ROLE = `wh_reader_${suffix}`;
const SCHEMA = `wh_shop_${suffix}`;
const PASSWORD = `pw-${randomUUID()}`;

const key = randomBytes(32).toString('base64');
let t: TestApp;
let admin: TestUser;
let owner: pg.Client;

const endpoint = () => ({ host: target.hostname, port: Number(target.port || 5432), database: target.pathname.slice(1) });

beforeAll(async () => {
  owner = new pg.Client({ connectionString: ADMIN_URL });
  await owner.connect();
  await owner.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}' NOSUPERUSER`);
  await owner.query(`CREATE SCHEMA ${SCHEMA}`);
  await owner.query(`CREATE TABLE ${SCHEMA}.exposures (user_id text, variant text, ts timestamp, country text)`);
  await owner.query(`CREATE TABLE ${SCHEMA}.events (user_id text, ts timestamptz, amount numeric(10,2))`);
  const data = seedData();
  for (const e of data.exposures) {
    await owner.query(`INSERT INTO ${SCHEMA}.exposures VALUES ($1, $2, $3, $4)`, [e.user_id, e.variant, sqlTime(e.ts), e.country]);
  }
  for (const e of data.events) await owner.query(`INSERT INTO ${SCHEMA}.events VALUES ($1, $2, $3)`, [e.user_id, e.ts.toISOString(), e.amount]);
  // A table that takes two seconds to read, to meet the statement timeout.
  await owner.query(`CREATE VIEW ${SCHEMA}.slow_exposures AS SELECT e.* FROM ${SCHEMA}.exposures e, pg_sleep(2)`);
  await owner.query(`CREATE VIEW ${SCHEMA}.stuck_exposures AS SELECT e.* FROM ${SCHEMA}.exposures e, pg_sleep(120)`);
  await owner.query(`GRANT USAGE ON SCHEMA ${SCHEMA} TO ${ROLE}`);
  await owner.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${SCHEMA} TO ${ROLE}`);
  t = await testApp({ env: { WAREHOUSE_CREDENTIALS_KEYS: key } });
  admin = await t.user({ role: 'ADMIN' });
});

afterAll(async () => {
  await t?.close();
  await owner.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await owner.query(`DROP ROLE IF EXISTS ${ROLE}`);
  await owner.end();
});

describe('warehouse analysis on PostgreSQL', () => {
  it('analyses seeded tables with a read-only role (numeric values, timestamp and timestamptz columns)', async () => {
    const created = await post(t, admin, '/connections', {
      name: 'Shop replica', warehouse_type: 'postgres', settings: { ...endpoint(), schema: SCHEMA },
      credentials: { username: ROLE, password: PASSWORD }, query_timeout_seconds: 60,
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.body).not.toContain(PASSWORD);
    const { id } = created.json();
    expect((await post(t, admin, `/connections/${id}/test`)).json()).toMatchObject({ ok: true });
    const { run } = await analyseAndCheck(t, admin, id, SCHEMA);
    // The filter value is bound, never spliced into the text.
    expect(run.sql.join('\n')).not.toMatch(/'DE'/);
    expect(run.sql[0]).toContain('"country" = $3');
  });

  it('stops a statement at query_timeout_seconds and fails the run with query_timeout', async () => {
    const created = await post(t, admin, '/connections', {
      name: 'Slow replica', warehouse_type: 'postgres', settings: endpoint(), credentials: { username: ROLE, password: PASSWORD }, query_timeout_seconds: 1,
    });
    const source = await post(t, admin, '/sources', {
      kind: 'assignment', connection_id: created.json().id, name: 'Slow', table: `${SCHEMA}.slow_exposures`,
      columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'ts' },
    });
    expect((await post(t, admin, `/sources/${source.json().id}/validate`)).json()).toEqual({ valid: true, errors: [] });
    const preview = await post(t, admin, `/sources/${source.json().id}/preview`, { window_start: '2026-03-01T00:00:00', window_end: '2026-03-15T00:00:00' });
    expect(preview.statusCode, preview.body).toBe(202);
    await t.services.warehouse.drain();
    const run = (await t.inject({ method: 'GET', url: `/api/v1/warehouse/analysis/runs/${preview.json().id}`, headers: admin.headers })).json();
    expect(run).toMatchObject({ status: 'failed', error_code: 'query_timeout', preview: null });
    expect(run.sql).toHaveLength(1);
  });

  it('cancels the statement of a running run at shutdown and records the run as interrupted', async () => {
    const created = await post(t, admin, '/connections', {
      name: 'Slow replica 2', warehouse_type: 'postgres', settings: endpoint(), credentials: { username: ROLE, password: PASSWORD }, query_timeout_seconds: 600,
    });
    const source = await post(t, admin, '/sources', {
      kind: 'assignment', connection_id: created.json().id, name: 'Stuck', table: `${SCHEMA}.stuck_exposures`,
      columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'ts' },
    });
    await post(t, admin, `/sources/${source.json().id}/validate`);
    const other = await t.spawn({ WAREHOUSE_CREDENTIALS_KEYS: key });
    const url = `/api/v1/warehouse/analysis/sources/${source.json().id}/preview`;
    const preview = await other.app.inject({ method: 'POST', url, headers: admin.headers, payload: {} });
    expect(preview.statusCode).toBe(202);
    const read = async () => (await t.inject({ method: 'GET', url: `/api/v1/warehouse/analysis/runs/${preview.json().id}`, headers: admin.headers })).json();
    // The other server starts the run as soon as it is queued; wait (by reading, not sleeping) until it is running.
    for (let i = 0; i < 10_000 && (await read()).status !== 'running'; i++);
    await other.app.close();
    expect(await read()).toMatchObject({ status: 'failed', error_code: 'interrupted' });
  });

  it('refuses a superuser connection when testing it (spec rule 6)', async () => {
    const res = await post(t, admin, '/connections/test', {
      warehouse_type: 'postgres', settings: endpoint(), credentials: { username: target.username || 'postgres', password: 'x' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, error_code: 'admin_role_refused' });
  });

  it('reports an unreachable server as a failed test, not an error', async () => {
    const res = await post(t, admin, '/connections/test', {
      warehouse_type: 'postgres', settings: { ...endpoint(), port: 1 }, credentials: { username: ROLE, password: 'wrong' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, error_code: 'connection_failed' });
  });
});
