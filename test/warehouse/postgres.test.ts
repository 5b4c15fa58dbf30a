import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
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

  it('creates a saved superuser connection (create does not sign in) and refuses it at test and validation', async () => {
    const created = await post(t, admin, '/connections', {
      name: 'Superuser', warehouse_type: 'postgres', settings: endpoint(), credentials: { username: target.username || 'postgres', password: 'x' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().status).toBe('active');
    const id = created.json().id as string;
    expect((await post(t, admin, `/connections/${id}/test`)).json()).toMatchObject({ ok: false, error_code: 'admin_role_refused' });
    const source = await post(t, admin, '/sources', {
      kind: 'assignment', connection_id: id, name: 'As superuser', table: `${SCHEMA}.exposures`,
      columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'ts' },
    });
    const validation = (await post(t, admin, `/sources/${source.json().id}/validate`)).json();
    expect(validation.valid).toBe(false);
    expect(validation.errors[0]).toMatch(/administrative role/);
    // The OpenAPI description says when the refusal happens, rather than promising a 422 on create.
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.paths['/api/v1/warehouse/analysis/connections'].post.description).toMatch(/Creating does not sign in/);
  });

  it('reports an unreachable server as a failed test, not an error', async () => {
    const res = await post(t, admin, '/connections/test', {
      warehouse_type: 'postgres', settings: { ...endpoint(), port: 1 }, credentials: { username: ROLE, password: 'wrong' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, error_code: 'connection_refused' });
  });
});

/**
 * A TCP proxy in front of the PostgreSQL above that passes the startup and sign-in exchange, and then, while
 * `stalled` is set, swallows everything the client sends: a warehouse that accepts sign-in and never answers again.
 */
async function stallingProxy(): Promise<{ port: number; stalled: boolean; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const proxy = { port: 0, stalled: true, close: async () => undefined as void };
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let signedIn = false;
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      // Server messages are a type byte and a length; the first ReadyForQuery ('Z') ends sign-in.
      pending = Buffer.concat([pending, chunk]);
      while (!signedIn && pending.length >= 5) {
        const length = pending.readInt32BE(1);
        if (pending.length < 1 + length) break;
        if (pending[0] === 0x5a) signedIn = true;
        pending = pending.subarray(1 + length);
      }
      client.write(chunk);
    });
    client.on('data', (chunk: Buffer) => {
      if (!(signedIn && proxy.stalled)) upstream.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}

describe('a warehouse that signs in and then stops answering', () => {
  let quick: TestApp;
  let quickAdmin: TestUser;
  let proxy: Awaited<ReturnType<typeof stallingProxy>>;

  beforeAll(async () => {
    proxy = await stallingProxy();
    // The spec's 30-second bound on tests and validation, shortened so the test does not wait half a minute.
    quick = await testApp({ env: { WAREHOUSE_CREDENTIALS_KEYS: key }, configure: (config) => void (config.warehouse.checkSeconds = 1) });
    quickAdmin = await quick.user({ role: 'ADMIN' });
  });

  afterAll(async () => {
    await quick?.close();
    await proxy?.close();
  });

  const stalledEndpoint = () => ({ ...endpoint(), host: '127.0.0.1', port: proxy.port, schema: SCHEMA });

  it('ends a connection test at its bound with query_timeout, even after sign-in succeeded', async () => {
    proxy.stalled = true;
    const res = await post(quick, quickAdmin, '/connections/test', {
      warehouse_type: 'postgres', settings: stalledEndpoint(), credentials: { username: ROLE, password: PASSWORD },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, error_code: 'query_timeout' });
    expect(res.json().message).not.toContain(PASSWORD);
  });

  it('fails validation and a run at the bound, and frees the connection for the next run', async () => {
    proxy.stalled = false;
    const created = await post(quick, quickAdmin, '/connections', {
      name: 'Stalling replica', warehouse_type: 'postgres', settings: stalledEndpoint(),
      credentials: { username: ROLE, password: PASSWORD }, query_timeout_seconds: 1,
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    expect((await post(quick, quickAdmin, `/connections/${id}/test`)).json()).toMatchObject({ ok: true });
    const source = await post(quick, quickAdmin, '/sources', {
      kind: 'assignment', connection_id: id, name: 'Exposures', table: `${SCHEMA}.exposures`,
      columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'ts' },
    });
    const sourceId = source.json().id as string;
    expect((await post(quick, quickAdmin, `/sources/${sourceId}/validate`)).json()).toEqual({ valid: true, errors: [] });

    proxy.stalled = true;
    expect((await post(quick, quickAdmin, `/connections/${id}/test`)).json()).toMatchObject({ ok: false, error_code: 'query_timeout' });
    const body = { window_start: '2026-03-01T00:00:00Z', window_end: '2026-03-15T00:00:00Z' };
    const preview = await post(quick, quickAdmin, `/sources/${sourceId}/preview`, body);
    expect(preview.statusCode, preview.body).toBe(202);
    await quick.services.warehouse.drain();
    const run = (await quick.inject({ method: 'GET', url: `/api/v1/warehouse/analysis/runs/${preview.json().id}`, headers: quickAdmin.headers })).json();
    expect(run).toMatchObject({ status: 'failed', error_code: 'query_timeout' });
    // The connection is free again: the next run is queued, not refused with run_in_progress.
    const next = await post(quick, quickAdmin, `/sources/${sourceId}/preview`, body);
    expect(next.statusCode, next.body).toBe(202);
    await quick.services.warehouse.drain();
    const validation = (await post(quick, quickAdmin, `/sources/${sourceId}/validate`)).json();
    expect(validation.valid).toBe(false);
    expect(validation.errors[0]).toMatch(/within 1 seconds/);
  });
});
