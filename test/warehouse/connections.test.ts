import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { get, post, put } from './flow.js';

let t: TestApp;
let dir: string;
let admin: TestUser;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'uplift-wh-connections-'));
  t = await testApp({ env: { WAREHOUSE_DUCKDB_DIR: dir, WAREHOUSE_CREDENTIALS_KEYS: randomBytes(32).toString('base64') } });
  admin = await t.user({ role: 'ADMIN' });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An HTTP listener standing in for a ClickHouse server: it keeps the headers of every request and answers 500. */
async function headerCatcher(): Promise<{ url: string; requests: IncomingHttpHeaders[]; close(): Promise<void> }> {
  const requests: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.headers);
    req.resume();
    res.writeHead(500).end('Code: 516. DB::Exception: Authentication failed. (AUTHENTICATION_FAILED)');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** user:password as the client sent them (Basic authorization, or ClickHouse's own headers). */
function signIn(headers: IncomingHttpHeaders): string {
  if (headers['x-clickhouse-key'] !== undefined) return `${String(headers['x-clickhouse-user'])}:${String(headers['x-clickhouse-key'])}`;
  return Buffer.from(String(headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
}

describe('stored credentials follow no change of where the connection signs in', () => {
  it('ClickHouse: a new url drops the password unless the same request sends one', async () => {
    const [owned, foreign] = [await headerCatcher(), await headerCatcher()];
    try {
      const password = `pw-${randomUUID()}`;
      const created = await post(t, admin, '/connections', {
        name: 'CH', warehouse_type: 'clickhouse', settings: { url: owned.url, database: 'analytics' }, credentials: { username: 'reader', password },
      });
      expect(created.statusCode, created.body).toBe(201);
      const id = created.json().id as string;
      await post(t, admin, `/connections/${id}/test`);
      expect(owned.requests.map(signIn)).toContain(`reader:${password}`);

      for (const settings of [{ url: foreign.url, database: 'analytics' }, { url: owned.url, database: 'other' }]) {
        const moved = await put(t, admin, `/connections/${id}`, { settings });
        expect(moved.statusCode, moved.body).toBe(200);
        expect(moved.json().status).toBe('needs_new_credentials');
      }
      await put(t, admin, `/connections/${id}`, { settings: { url: foreign.url, database: 'analytics' } });
      const tested = await post(t, admin, `/connections/${id}/test`);
      expect(tested.statusCode).toBe(409);
      expect(tested.json().detail.code).toBe('credentials_required');
      expect(foreign.requests).toEqual([]);

      const replacement = `pw-${randomUUID()}`;
      const replaced = await put(t, admin, `/connections/${id}`, {
        settings: { url: foreign.url, database: 'analytics' }, credentials: { username: 'reader', password: replacement },
      });
      expect(replaced.json().status).toBe('active');
      expect((await post(t, admin, `/connections/${id}/test`)).json()).toMatchObject({ ok: false, error_code: 'authentication_failed' });
      expect(foreign.requests.length).toBeGreaterThan(0);
      expect(new Set(foreign.requests.map(signIn))).toEqual(new Set([`reader:${replacement}`]));
    } finally {
      await owned.close();
      await foreign.close();
    }
  });

  it('validating a source of a connection whose credentials were dropped is refused with credentials_required', async () => {
    const created = await post(t, admin, '/connections', {
      name: 'CH 2', warehouse_type: 'clickhouse', settings: { url: 'http://127.0.0.1:1' }, credentials: { username: 'reader', password: 'pw-0000' },
    });
    const id = created.json().id as string;
    const source = await post(t, admin, '/sources', {
      kind: 'metric', connection_id: id, name: 'M', table: 'db.events', columns: { unit_id: 'user_id', event_at: 'ts' },
    });
    await put(t, admin, `/connections/${id}`, { settings: { url: 'http://127.0.0.1:2' } });
    const validation = await post(t, admin, `/sources/${source.json().id}/validate`);
    expect(validation.statusCode).toBe(409);
    expect(validation.json().detail.code).toBe('credentials_required');
  });
});

describe('GET-modify-PUT', () => {
  const duckdb = () => ({ name: `DuckDB ${randomUUID().slice(0, 6)}`, warehouse_type: 'duckdb', settings: { path: 'shop.duckdb' }, credentials: {} });

  it('takes a connection back as it was read, with a change, and refuses a field that cannot change at its place', async () => {
    const created = await post(t, admin, '/connections', duckdb());
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const read = (await get(t, admin, `/connections/${id}`)).json();
    // Raising a limit: the worst case it read back is not taken as a budget the new limit would exceed.
    const changed = await put(t, admin, `/connections/${id}`, { ...read, name: 'Renamed', query_timeout_seconds: 600 });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({
      id, name: 'Renamed', warehouse_type: 'duckdb', status: 'active', query_timeout_seconds: 600, bytes_limit: null,
      worst_case_seconds_per_day: 20 * 11 * 600, settings: { path: 'shop.duckdb' },
    });

    for (const [field, value] of [['warehouse_type', 'postgres'], ['id', randomUUID()], ['created_at', '2020-01-01T00:00:00Z']] as const) {
      const refused = await put(t, admin, `/connections/${id}`, { ...read, [field]: value });
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toEqual({ detail: [{ type: 'immutable', loc: ['body', field], msg: 'This field cannot change; send the stored value or leave it out' }] });
    }
    expect((await get(t, admin, `/connections/${id}`)).json().name).toBe('Renamed');
    // DuckDB signs in with nothing: another file drops nothing and needs nothing new.
    const otherFile = await put(t, admin, `/connections/${id}`, { settings: { path: 'other.duckdb' } });
    expect(otherFile.json()).toMatchObject({ status: 'active', settings: { path: 'other.duckdb' } });
  });

  it('takes a source back as it was read, and refuses another kind or connection at its place', async () => {
    const connectionId = (await post(t, admin, '/connections', duckdb())).json().id as string;
    const other = (await post(t, admin, '/connections', duckdb())).json().id as string;
    const created = await post(t, admin, '/sources', {
      kind: 'assignment', connection_id: connectionId, name: 'Exposures', table: 'main.exposures',
      columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'ts' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const read = (await get(t, admin, `/sources/${id}`)).json();
    expect(read.metric_type).toBeNull();
    const changed = await put(t, admin, `/sources/${id}`, { ...read, name: 'Exposures (DE)', filters: [{ column: 'country', operator: 'eq', value: 'DE' }] });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ id, kind: 'assignment', connection_id: connectionId, name: 'Exposures (DE)', metric_type: null });

    for (const [field, value] of [['kind', 'metric'], ['connection_id', other]] as const) {
      const refused = await put(t, admin, `/sources/${id}`, { ...read, [field]: value });
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toEqual({ detail: [{ type: 'immutable', loc: ['body', field], msg: 'This field cannot change; send the stored value or leave it out' }] });
    }
    const metric = await post(t, admin, '/sources', {
      kind: 'metric', connection_id: connectionId, name: 'Events', table: 'main.events', columns: { unit_id: 'user_id', event_at: 'ts' },
    });
    const cleared = await put(t, admin, `/sources/${metric.json().id}`, { metric_type: null });
    expect(cleared.statusCode).toBe(422);
    expect(cleared.json().detail[0]).toMatchObject({ type: 'enum', loc: ['body', 'metric_type'] });
  });

  it('tests a create body as it is: its name is accepted and ignored', async () => {
    const res = await post(t, admin, '/connections/test', { ...duckdb(), settings: { path: 'missing.duckdb' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, error_code: 'connection_failed' });
  });
});
