import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { TLSSocket } from 'node:tls';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { analyseAndCheck, get, post, put } from './flow.js';
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
/** A superuser whose name says nothing: only its attribute makes it administrative. */
const SUPER = `wh_super_${suffix}`;
/** A reader that is made superuser after its connection was saved. */
const PROMOTED = `wh_promoted_${suffix}`;
const SCHEMA = `wh_shop_${suffix}`;
const PASSWORD = `pw-${randomUUID()}`;

const key = randomBytes(32).toString('base64');
let t: TestApp;
let admin: TestUser;
let owner: pg.Client;

// The machine's PostgreSQL has no TLS: these connections say so (the default is TLS with a verified certificate).
const endpoint = () => ({ host: target.hostname, port: Number(target.port || 5432), database: target.pathname.slice(1), ssl: false });

beforeAll(async () => {
  owner = new pg.Client({ connectionString: ADMIN_URL });
  await owner.connect();
  await owner.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}' NOSUPERUSER`);
  await owner.query(`CREATE SCHEMA ${SCHEMA}`);
  await owner.query(`CREATE TABLE ${SCHEMA}.exposures (user_id text, variant text, ts timestamp, country text)`);
  await owner.query(`CREATE TABLE ${SCHEMA}.events (user_id text, ts timestamptz, amount numeric(10,2))`);
  const data = seedData();
  // Many rows a statement: one round trip per row kept a loaded machine past the hook's bound.
  await insertRows(`${SCHEMA}.exposures`, data.exposures.map((e) => [e.user_id, e.variant, sqlTime(e.ts), e.country]));
  await insertRows(`${SCHEMA}.events`, data.events.map((e) => [e.user_id, e.ts.toISOString(), e.amount]));
  // A table that takes two seconds to read, to meet the statement timeout.
  await owner.query(`CREATE VIEW ${SCHEMA}.slow_exposures AS SELECT e.* FROM ${SCHEMA}.exposures e, pg_sleep(2)`);
  await owner.query(`CREATE VIEW ${SCHEMA}.stuck_exposures AS SELECT e.* FROM ${SCHEMA}.exposures e, pg_sleep(120)`);
  await owner.query(`CREATE ROLE ${SUPER} LOGIN PASSWORD '${PASSWORD}' SUPERUSER`);
  await owner.query(`CREATE ROLE ${PROMOTED} LOGIN PASSWORD '${PASSWORD}' NOSUPERUSER`);
  for (const reader of [ROLE, PROMOTED]) {
    await owner.query(`GRANT USAGE ON SCHEMA ${SCHEMA} TO ${reader}`);
    await owner.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${SCHEMA} TO ${reader}`);
  }
  t = await testApp({ env: { WAREHOUSE_CREDENTIALS_KEYS: key } });
  admin = await t.user({ role: 'ADMIN' });
});

async function insertRows(table: string, rows: unknown[][]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    const batch = rows.slice(i, i + 500);
    const width = batch[0].length;
    const values = batch.map((_, r) => `(${Array.from({ length: width }, (__, c) => `$${r * width + c + 1}`).join(', ')})`).join(', ');
    await owner.query(`INSERT INTO ${table} VALUES ${values}`, batch.flat());
  }
}

afterAll(async () => {
  await t?.close();
  await owner.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  for (const role of [ROLE, SUPER, PROMOTED]) {
    await owner.query(`DROP OWNED BY ${role}`).catch(() => undefined);
    await owner.query(`DROP ROLE IF EXISTS ${role}`);
  }
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

  const RULE_6 = {
    type: 'admin_role_refused',
    loc: ['body', 'credentials', 'username'],
    msg: 'A connection whose role is a built-in administrative role of the warehouse is refused (warehouse rule 6); sign in with a role that has read access only',
  };

  it('refuses the built-in postgres role and any superuser at create and when testing (spec rule 6)', async () => {
    const asPostgres = await post(t, admin, '/connections', {
      name: 'As postgres', warehouse_type: 'postgres', settings: endpoint(), credentials: { username: 'postgres', password: 'x' },
    });
    expect(asPostgres.statusCode).toBe(422);
    expect(asPostgres.json()).toEqual({ detail: [RULE_6] });
    // A superuser of any name: create signs in and reads the role's attributes.
    const asSuper = await post(t, admin, '/connections', {
      name: 'As superuser', warehouse_type: 'postgres', settings: endpoint(), credentials: { username: SUPER, password: PASSWORD },
    });
    expect(asSuper.statusCode).toBe(422);
    expect(asSuper.json()).toEqual({ detail: [RULE_6] });
    expect((await get(t, admin, '/connections')).json().map((c: { name: string }) => c.name)).not.toContain('As superuser');
    const tested = await post(t, admin, '/connections/test', {
      warehouse_type: 'postgres', settings: endpoint(), credentials: { username: SUPER, password: PASSWORD },
    });
    expect(tested.statusCode).toBe(200);
    expect(tested.json()).toMatchObject({ ok: false, error_code: 'admin_role_refused', message: RULE_6.msg });
    expect((await post(t, admin, '/connections/test', {
      warehouse_type: 'postgres', settings: endpoint(), credentials: { username: 'postgres', password: 'x' },
    })).json()).toEqual({ detail: [RULE_6] });
  });

  it('refuses a superuser at update, and a role made superuser after saving at test, validation and before its run', async () => {
    const created = await post(t, admin, '/connections', {
      name: 'Promoted later', warehouse_type: 'postgres', settings: { ...endpoint(), schema: SCHEMA }, credentials: { username: PROMOTED, password: PASSWORD },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const toSuper = await put(t, admin, `/connections/${id}`, { credentials: { username: SUPER, password: PASSWORD } });
    expect(toSuper.statusCode).toBe(422);
    expect(toSuper.json()).toEqual({ detail: [RULE_6] });
    const source = await post(t, admin, '/sources', {
      kind: 'assignment', connection_id: id, name: 'Exposures', table: `${SCHEMA}.exposures`,
      columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'ts' },
    });
    const sourceId = source.json().id as string;
    expect((await post(t, admin, `/sources/${sourceId}/validate`)).json()).toEqual({ valid: true, errors: [] });

    await owner.query(`ALTER ROLE ${PROMOTED} SUPERUSER`);
    try {
      expect((await post(t, admin, `/connections/${id}/test`)).json()).toMatchObject({ ok: false, error_code: 'admin_role_refused' });
      // A change that keeps the stored credentials signs in with them again.
      const renamed = await put(t, admin, `/connections/${id}`, { settings: { ...endpoint(), schema: 'public' } });
      expect(renamed.statusCode).toBe(422);
      expect(renamed.json()).toEqual({ detail: [RULE_6] });
      // Validated while it was a reader: the run signs in first and stops before any statement is sent.
      const preview = await post(t, admin, `/sources/${sourceId}/preview`, { window_start: '2026-03-01T00:00:00Z', window_end: '2026-03-15T00:00:00Z' });
      expect(preview.statusCode, preview.body).toBe(202);
      await t.services.warehouse.drain();
      const run = (await get(t, admin, `/runs/${preview.json().id}`)).json();
      expect(run).toMatchObject({ status: 'failed', error_code: 'admin_role_refused', error_message: RULE_6.msg, preview: null, sql: [] });
      const validation = (await post(t, admin, `/sources/${sourceId}/validate`)).json();
      expect(validation).toEqual({ valid: false, errors: [RULE_6.msg] });
    } finally {
      await owner.query(`ALTER ROLE ${PROMOTED} NOSUPERUSER`);
    }
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
 * A listener standing in for a server an administrator controls: it speaks just enough of the PostgreSQL protocol
 * to answer TLS (refusing it, 'N', or with a self-signed certificate when `tls` is given) and then ask for the
 * password in cleartext, and keeps every byte it is sent (decrypted, under TLS).
 */
async function passwordCatcher(tls?: { key: Buffer; cert: Buffer }): Promise<{ port: number; connections: number; received(): Buffer; close(): Promise<void> }> {
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  const catcher = { port: 0, connections: 0, received: () => Buffer.concat(chunks), close: async () => undefined as void };
  const serve = (stream: Socket) => {
    let pending = Buffer.alloc(0);
    let startedUp = false;
    stream.on('error', () => undefined);
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      pending = Buffer.concat([pending, chunk]);
      while (!startedUp && pending.length >= 8 && pending.length >= pending.readInt32BE(0)) {
        const length = pending.readInt32BE(0);
        const isSslRequest = pending.readInt32BE(4) === 80877103;
        pending = pending.subarray(length);
        if (isSslRequest && tls) {
          stream.off('data', onData);
          stream.write('S', () => serve(new TLSSocket(stream, { isServer: true, ...tls })));
          return;
        }
        if (isSslRequest) stream.write('N');
        else {
          startedUp = true;
          stream.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3])); // AuthenticationCleartextPassword
        }
      }
      if (startedUp && pending.length > 0 && pending[0] === 0x70) stream.destroy(); // the password message
    };
    stream.on('data', onData);
  };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    catcher.connections += 1;
    serve(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  catcher.port = (server.address() as AddressInfo).port;
  catcher.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return catcher;
}

describe('stored credentials and TLS', () => {
  let catcher: Awaited<ReturnType<typeof passwordCatcher>>;
  beforeAll(async () => {
    catcher = await passwordCatcher();
  });
  afterAll(() => catcher?.close());

  const elsewhere = () => ({ host: '127.0.0.1', port: catcher.port, database: 'postgres', ssl: false });

  it('drops the stored password when the settings point elsewhere: it never reaches the new server', async () => {
    const created = await post(t, admin, '/connections', {
      name: 'Moved', warehouse_type: 'postgres', settings: { ...endpoint(), schema: SCHEMA }, credentials: { username: ROLE, password: PASSWORD },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    // A setting that does not say where or how to sign in keeps them.
    const schemaOnly = await put(t, admin, `/connections/${id}`, { settings: endpoint() });
    expect(schemaOnly.json().status).toBe('active');
    expect((await post(t, admin, `/connections/${id}/test`)).json()).toMatchObject({ ok: true });

    const moved = await put(t, admin, `/connections/${id}`, { settings: elsewhere() });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json()).toMatchObject({ status: 'needs_new_credentials', settings: elsewhere() });
    expect((await get(t, admin, `/connections/${id}`)).json().status).toBe('needs_new_credentials');
    const tested = await post(t, admin, `/connections/${id}/test`);
    expect(tested.statusCode).toBe(409);
    expect(tested.json()).toEqual({ detail: {
      code: 'credentials_required',
      message: "The connection's settings changed where or how it signs in, so its stored credentials were dropped; send new credentials",
    } });
    // Pointing it back does not bring them back.
    const back = await put(t, admin, `/connections/${id}`, { settings: endpoint() });
    expect(back.json().status).toBe('needs_new_credentials');
    expect(catcher.connections).toBe(0);

    // New credentials in the same request: the connection is usable again, and they (only they) go to the new place.
    const other = `other-${randomUUID()}`;
    const replaced = await put(t, admin, `/connections/${id}`, { settings: elsewhere(), credentials: { username: ROLE, password: other } });
    expect(replaced.json().status).toBe('active');
    expect((await post(t, admin, `/connections/${id}/test`)).json()).toMatchObject({ ok: false, error_code: 'unexpected_response' });
    expect(catcher.received().includes(other)).toBe(true);
    expect(catcher.received().includes(PASSWORD)).toBe(false);
  });

  it('drops them when only ssl changes, so a password never goes out unencrypted on its own', async () => {
    const created = await post(t, admin, '/connections', {
      name: 'TLS off later', warehouse_type: 'postgres', settings: { ...endpoint(), ssl: true }, credentials: { username: ROLE, password: PASSWORD },
    });
    expect(created.statusCode, created.body).toBe(201);
    const plain = await put(t, admin, `/connections/${created.json().id}`, { settings: endpoint() });
    expect(plain.json()).toMatchObject({ status: 'needs_new_credentials', settings: { ssl: false } });
  });

  it('connects with TLS by default: a server that refuses TLS fails clearly and never gets the password', async () => {
    const before = catcher.connections;
    const { ssl: _, ...noSsl } = elsewhere();
    const refused = await post(t, admin, '/connections/test', {
      warehouse_type: 'postgres', settings: noSsl, credentials: { username: ROLE, password: PASSWORD },
    });
    expect(refused.json()).toMatchObject({
      ok: false,
      error_code: 'tls_failed',
      message: 'The TLS handshake with the warehouse failed (TLS not offered, or its certificate not trusted)',
    });
    expect(catcher.connections).toBe(before + 1);
    expect(catcher.received().includes(PASSWORD)).toBe(false);
    // The machine's PostgreSQL has no TLS either; with ssl: false it signs in.
    const { ssl: __, ...local } = endpoint();
    expect((await post(t, admin, '/connections/test', { warehouse_type: 'postgres', settings: local, credentials: { username: ROLE, password: PASSWORD } })).json())
      .toMatchObject({ ok: false, error_code: 'tls_failed' });
    expect((await post(t, admin, '/connections/test', { warehouse_type: 'postgres', settings: endpoint(), credentials: { username: ROLE, password: PASSWORD } })).json())
      .toMatchObject({ ok: true });
  });

  it('verifies the certificate: a server offering TLS with a certificate no authority signed never gets the password', async () => {
    const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url));
    const impostor = await passwordCatcher({ key: fixture('self-signed-test.key'), cert: fixture('self-signed-test.crt') });
    try {
      const res = await post(t, admin, '/connections/test', {
        warehouse_type: 'postgres', settings: { host: '127.0.0.1', port: impostor.port, database: 'postgres' }, credentials: { username: ROLE, password: PASSWORD },
      });
      expect(res.json()).toMatchObject({ ok: false, error_code: 'tls_failed' });
      expect(res.json().message).toMatch(/certificate/i);
      expect(impostor.connections).toBe(1);
      expect(impostor.received().includes(PASSWORD)).toBe(false);
    } finally {
      await impostor.close();
    }
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
