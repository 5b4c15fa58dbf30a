import { randomBytes, randomUUID, sign, verify } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs } from '../../src/db/schema/audit-logs.js';
import { warehouseConnections } from '../../src/db/schema/warehouse.js';
import { DRIVERS } from '../../src/modules/warehouse/connectors/index.js';
import { FAILURE_MESSAGES } from '../../src/modules/warehouse/connectors/types.js';
import { createKeyring } from '../../src/modules/warehouse/credentials.js';
import { createWarehouseService } from '../../src/modules/warehouse/service.js';
import { createAuditLog } from '../../src/platform/audit.js';
import { fixedClock } from '../../src/platform/clock.js';
import { experiment } from '../helpers/fixtures.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { get, post, seededSources, W } from './flow.js';
import { seedDuckDb, WINDOW_END, WINDOW_START } from './seed.js';

const KEY_1 = randomBytes(32).toString('base64');
const KEY_2 = randomBytes(32).toString('base64');
const NOW = new Date('2026-11-24T23:00:00Z');
const clock = fixedClock(NOW);

let t: TestApp;
let dir: string;
let admin: TestUser;
let developer: TestUser;
let analyst: TestUser;
let viewer: TestUser;

const duckdb = (extra: Record<string, unknown> = {}) => ({
  name: `DuckDB ${randomUUID().slice(0, 6)}`, warehouse_type: 'duckdb', settings: { path: 'shop.duckdb' }, credentials: {}, ...extra,
});

/** A connection on its own copy of the seeded file, so runs on one never wait for another. */
async function connection(extra: Record<string, unknown> = {}): Promise<string> {
  const file = `shop-${randomUUID().slice(0, 8)}.duckdb`;
  copyFileSync(join(dir, 'shop.duckdb'), join(dir, file));
  const res = await post(t, admin, '/connections', duckdb({ settings: { path: file }, ...extra }));
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

async function validated(connectionId: string) {
  const sources = await seededSources(t, admin, connectionId, 'main');
  for (const id of Object.values(sources)) expect((await post(t, admin, `/sources/${id}/validate`)).json().valid).toBe(true);
  return sources;
}

const windowBody = { window_start: WINDOW_START.toISOString(), window_end: WINDOW_END.toISOString() };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'uplift-wh-api-'));
  await seedDuckDb(join(dir, 'shop.duckdb'));
  t = await testApp({ clock, env: { WAREHOUSE_DUCKDB_DIR: dir, WAREHOUSE_CREDENTIALS_KEYS: KEY_1 } });
  admin = await t.user({ role: 'ADMIN' });
  developer = await t.user({ role: 'DEVELOPER' });
  analyst = await t.user({ role: 'ANALYST' });
  viewer = await t.user();
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('access', () => {
  it('needs a token, and names the role needed and the caller role when refusing', async () => {
    expect((await t.inject({ method: 'GET', url: `${W}/connectors` })).statusCode).toBe(401);
    const res = await get(t, viewer, '/connections');
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({
      detail: { code: 'role_required', message: 'This needs the role ADMIN or DEVELOPER or ANALYST; your role is VIEWER', required_roles: ['ADMIN', 'DEVELOPER', 'ANALYST'], role: 'VIEWER' },
    });
    // The role check comes before body validation: an invalid body from a developer is still a 403.
    const dev = await post(t, developer, '/connections', { nonsense: true });
    expect(dev.statusCode).toBe(403);
    expect(dev.json().detail.code).toBe('role_required');
  });

  it('lets analysts manage metric sources but not assignment sources, deletes or analyses', async () => {
    const connectionId = await connection();
    const metric = await post(t, analyst, '/sources', {
      kind: 'metric', connection_id: connectionId, name: 'Clicks', table: 'main.events', columns: { unit_id: 'user_id', event_at: 'ts' },
    });
    expect(metric.statusCode, metric.body).toBe(201);
    expect(metric.json()).toMatchObject({ metric_type: 'proportion', validated_at: null, filters: [], cap_value: null });
    expect((await post(t, analyst, `/sources/${metric.json().id}/validate`)).json()).toEqual({ valid: true, errors: [] });
    const assignment = await post(t, analyst, '/sources', {
      kind: 'assignment', connection_id: connectionId, name: 'Exp', table: 'main.exposures', columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'ts' },
    });
    expect(assignment.statusCode).toBe(403);
    const removed = await t.inject({ method: 'DELETE', url: `${W}/sources/${metric.json().id}`, headers: analyst.headers });
    expect(removed.statusCode).toBe(403);
    expect(removed.json().detail).toMatchObject({ code: 'role_required', role: 'ANALYST' });
    const exp = await experiment(t, developer);
    const run = await post(t, analyst, `/experiments/${exp.id}/runs`, { connection_id: connectionId, assignment_source_id: randomUUID(), metric_source_ids: [randomUUID()] });
    expect(run.statusCode).toBe(403);
    expect((await get(t, viewer, `/experiments/${exp.id}/runs`)).statusCode).toBe(403);
    expect((await get(t, analyst, `/experiments/${exp.id}/runs`)).json()).toEqual([]);
    expect((await get(t, viewer, '/connectors')).statusCode).toBe(200);
  });

  it('answers 404 with a code for unknown resources and 422 for malformed ids', async () => {
    for (const path of ['/connections', '/sources', '/runs']) {
      const res = await get(t, admin, `${path}/${randomUUID()}`);
      expect(res.statusCode).toBe(404);
      expect(res.json().detail.code).toMatch(/_not_found$/);
    }
    const bad = await get(t, admin, '/connections/not-a-uuid');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['path', 'connection_id']);
    expect((await get(t, admin, `/experiments/${randomUUID()}/runs`)).json().detail.code).toBe('experiment_not_found');
    expect((await get(t, admin, '/elsewhere')).statusCode).toBe(404);
  });

  it('serves nothing under /api/v1/warehouse in the core profile', async () => {
    const core = await t.spawn({ DEPLOYMENT_PROFILE: 'core', WAREHOUSE_CREDENTIALS_KEYS: KEY_1 }, clock);
    const res = await core.app.inject({ method: 'GET', url: `${W}/connectors`, headers: admin.headers });
    expect(res.statusCode).toBe(404);
  });
});

describe('connections', () => {
  it('refuses unavailable drivers, paths outside the DuckDB directory and limits beyond the deployment', async () => {
    const snowflake = await post(t, admin, '/connections', {
      name: 'SF', warehouse_type: 'snowflake', settings: { account: 'a', warehouse: 'w' }, credentials: { username: 'u' },
    });
    expect(snowflake.statusCode).toBe(422);
    expect(snowflake.json().detail[0]).toMatchObject({ type: 'connector_disabled', loc: ['body', 'warehouse_type'] });
    const outside = await post(t, admin, '/connections', duckdb({ settings: { path: '../elsewhere.duckdb' } }));
    expect(outside.json().detail).toEqual([expect.objectContaining({ type: 'path_outside_directory', loc: ['body', 'settings', 'path'] })]);
    const limits = await post(t, admin, '/connections', duckdb({ query_timeout_seconds: 5000, bytes_limit: 10 }));
    expect(limits.json().detail.map((d: { loc: string[] }) => d.loc)).toEqual([['body', 'query_timeout_seconds'], ['body', 'bytes_limit']]);
    const postgres = await post(t, admin, '/connections', { name: 'PG', warehouse_type: 'postgres', settings: { host: 'h', port: 'x' }, credentials: { username: 'u', token: 't' } });
    expect(postgres.json().detail.map((d: { loc: string[]; type: string }) => [d.loc.join('.'), d.type])).toEqual([
      ['body.settings.port', 'int_type'],
      ['body.settings.database', 'missing'],
      ['body.credentials.token', 'extra_forbidden'],
      ['body.credentials.password', 'missing'],
    ]);
    const budget = await post(t, admin, '/connections', duckdb({ max_runs_per_day: 10, query_timeout_seconds: 60, worst_case_seconds_per_day: 6000 }));
    expect(budget.json().detail[0]).toMatchObject({ type: 'budget_exceeded', loc: ['body', 'worst_case_seconds_per_day'] });
  });

  it("names a DuckDB file as the connection gives it, never by the server's directory", async () => {
    const missing = await post(t, admin, '/connections/test', { warehouse_type: 'duckdb', settings: { path: 'missing.duckdb' }, credentials: {} });
    expect(missing.json()).toMatchObject({ ok: false, error_code: 'connection_failed' });
    expect(missing.json().message).toContain('"missing.duckdb"');
    expect(missing.body).not.toContain(dir);

    // A file that stops being a database after validation: the run's error_message names it as given too.
    const file = `broken-${randomUUID().slice(0, 8)}.duckdb`;
    copyFileSync(join(dir, 'shop.duckdb'), join(dir, file));
    const created = await post(t, admin, '/connections', duckdb({ settings: { path: `./${file}` } }));
    const { assignment } = await validated(created.json().id);
    writeFileSync(join(dir, file), 'not a database '.repeat(1000));
    const preview = await post(t, admin, `/sources/${assignment}/preview`, windowBody);
    expect(preview.statusCode, preview.body).toBe(202);
    await t.services.warehouse.drain();
    const run = await get(t, admin, `/runs/${preview.json().id}`);
    expect(run.json()).toMatchObject({ status: 'failed', error_code: 'connection_failed' });
    expect(run.json().error_message).toContain(`"./${file}"`);
    expect(run.body).not.toContain(dir);
  });

  it('reports what a warehouse answers as a code with a fixed message, never its text (which may echo the password)', async () => {
    // A ClickHouse stand-in whose error text repeats the password it was sent.
    const server = createServer((req, res) => {
      const basic = Buffer.from(String(req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
      const sent = String(req.headers['x-clickhouse-key'] ?? basic.slice(basic.indexOf(':') + 1));
      res.writeHead(500, { 'X-ClickHouse-Exception-Code': '516' });
      res.end(`Code: 516. DB::Exception: reader: Authentication failed: password ${sent} is incorrect. (AUTHENTICATION_FAILED)`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const password = `secret-${randomUUID()}`;
      const res = await post(t, admin, '/connections/test', {
        warehouse_type: 'clickhouse', settings: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
        credentials: { username: 'reader', password },
      });
      expect(res.json()).toEqual({ ok: false, error_code: 'authentication_failed', message: FAILURE_MESSAGES.authentication_failed, elapsed_ms: expect.any(Number) });
      expect(res.body).not.toContain(password);
      expect(res.body).not.toContain('DB::Exception');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('never returns or audits credentials, and shows the worst case per day', async () => {
    const res = await post(t, admin, '/connections', {
      name: 'PG', warehouse_type: 'postgres', settings: { host: '127.0.0.1', database: 'x' }, credentials: { username: 'reader', password: 'S3cret-Pa55' },
      max_runs_per_day: 5, query_timeout_seconds: 100,
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ worst_case_seconds_per_day: 5 * 11 * 100, worst_case_bytes_per_day: null, bytes_limit: null });
    const all = JSON.stringify([res.json(), (await get(t, admin, '/connections')).json()]);
    expect(all).not.toContain('S3cret');
    const [entry] = await t.database.db.select().from(auditLogs).where(and(eq(auditLogs.entityId, res.json().id), eq(auditLogs.action, 'warehouse_connection_create')));
    expect(entry.after).toMatchObject({ name: 'PG', warehouse_type: 'postgres' });
    expect(JSON.stringify(entry)).not.toContain('S3cret');
    expect(JSON.stringify(entry)).not.toContain('reader');
    expect((await t.inject({ method: 'DELETE', url: `${W}/connections/${res.json().id}`, headers: admin.headers })).statusCode).toBe(204);
  });

  it('rotates keys: old keys still decrypt, writes use the newest, an unknown key gives needs_new_credentials', async () => {
    const id = await connection();
    // The same clock as the first app: its tokens are checked against the test's time, not the wall clock.
    const rotated = await t.spawn({ WAREHOUSE_DUCKDB_DIR: dir, WAREHOUSE_CREDENTIALS_KEYS: `${KEY_2},${KEY_1}` }, clock);
    const read = await rotated.app.inject({ method: 'GET', url: `${W}/connections/${id}`, headers: admin.headers });
    expect(read.json().status).toBe('active');
    const resealed = await rotated.app.inject({ method: 'PUT', url: `${W}/connections/${id}`, headers: admin.headers, payload: { name: 'Renamed' } });
    expect(resealed.json()).toMatchObject({ name: 'Renamed', status: 'active' });
    // Sealed with KEY_2 now: an app knowing only KEY_1 cannot open it.
    const before = await get(t, admin, `/connections/${id}`);
    expect(before.json().status).toBe('needs_new_credentials');
    const tested = await post(t, admin, `/connections/${id}/test`);
    expect(tested.statusCode).toBe(409);
    expect(tested.json().detail.code).toBe('credentials_undecryptable');
    const replaced = await t.inject({ method: 'PUT', url: `${W}/connections/${id}`, headers: admin.headers, payload: { credentials: {} } });
    expect(replaced.json().status).toBe('active');
    expect((await post(t, admin, `/connections/${id}/test`)).json()).toMatchObject({ ok: true });

    const keyless = await t.spawn({ WAREHOUSE_DUCKDB_DIR: dir }, clock);
    const refused = await keyless.app.inject({ method: 'POST', url: `${W}/connections`, headers: admin.headers, payload: duckdb() });
    expect(refused.statusCode).toBe(503);
    expect(refused.json().detail.code).toBe('credentials_unavailable');
  });

  it('generates key pairs only for key-pair warehouses', async () => {
    const id = await connection();
    const res = await post(t, admin, `/connections/${id}/regenerate-key`);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].type).toBe('key_pair_not_supported');
  });

  it('keeps a connection that still has sources, deletes it once they are gone', async () => {
    const id = await connection();
    const source = await post(t, admin, '/sources', { kind: 'metric', connection_id: id, name: 'M', table: 'main.events', columns: { unit_id: 'user_id', event_at: 'ts' } });
    const blocked = await t.inject({ method: 'DELETE', url: `${W}/connections/${id}`, headers: admin.headers });
    expect(blocked.statusCode).toBe(409);
    expect(blocked.json().detail.code).toBe('connection_in_use');
    expect((await t.inject({ method: 'DELETE', url: `${W}/sources/${source.json().id}`, headers: admin.headers })).statusCode).toBe(204);
    expect((await t.inject({ method: 'DELETE', url: `${W}/connections/${id}`, headers: admin.headers })).statusCode).toBe(204);
  });
});

describe('sources', () => {
  it('checks table names, columns and filter values, and reports metadata problems on validate', async () => {
    const id = await connection();
    const bad = await post(t, admin, '/sources', {
      kind: 'metric', connection_id: id, name: 'M', table: 'events', metric_type: 'mean', columns: { unit_id: 'user id', event_at: 'ts' },
      filters: [{ column: 'name', operator: 'eq', value: "x' OR '1'='1" }],
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail.map((d: { loc: unknown[] }) => d.loc.join('.'))).toEqual([
      'body.table', 'body.columns.value', 'body.columns.unit_id', 'body.filters.0.value',
    ]);
    expect(bad.body).not.toContain('OR');
    const source = await post(t, admin, '/sources', {
      kind: 'metric', connection_id: id, name: 'M', table: 'main.events', metric_type: 'mean',
      columns: { unit_id: 'user_id', event_at: 'user_id', value: 'missing_column' },
    });
    const checked = await post(t, admin, `/sources/${source.json().id}/validate`);
    expect(checked.json().valid).toBe(false);
    expect(checked.json().errors.sort()).toEqual(['The event_at column is not a date or time', 'The value column is not in the table']);
    expect((await get(t, admin, `/sources/${source.json().id}`)).json()).toMatchObject({ validated_at: null, validation_errors: checked.json().errors });
    const missing = await post(t, admin, '/sources', { kind: 'metric', connection_id: id, name: 'M', table: 'main.nope', columns: { unit_id: 'a', event_at: 'b' } });
    expect((await post(t, admin, `/sources/${missing.json().id}/validate`)).json().errors).toEqual(['The table does not exist, or this connection cannot see it']);
  });

  it('clears validation on edit, and a preview then needs a new validation', async () => {
    const id = await connection();
    const { assignment } = await validated(id);
    expect((await get(t, admin, `/sources/${assignment}`)).json().validated_at).toBe(clock.now().toISOString());
    const edited = await t.inject({ method: 'PUT', url: `${W}/sources/${assignment}`, headers: admin.headers, payload: { name: 'Renamed' } });
    expect(edited.json()).toMatchObject({ name: 'Renamed', validated_at: null });
    const refused = await post(t, admin, `/sources/${assignment}/preview`, windowBody);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().detail.code).toBe('source_not_validated');
  });

  it('previews a source as a run of kind preview', async () => {
    const id = await connection();
    const { assignment, revenue } = await validated(id);
    const started = await post(t, developer, `/sources/${assignment}/preview`, windowBody);
    expect(started.statusCode, started.body).toBe(202);
    expect(started.json()).toMatchObject({ kind: 'preview', status: 'queued', experiment_id: null });
    await t.services.warehouse.drain();
    const run = (await get(t, analyst, `/runs/${started.json().id}`)).json();
    expect(run.status, JSON.stringify(run)).toBe('succeeded');
    const labels = run.preview.units_per_label;
    expect(Object.keys(labels)).toEqual(['control', 'treatment']);
    expect(run.preview.rows).toBeGreaterThan(labels.control + labels.treatment - 1);
    expect(run.preview.earliest >= WINDOW_START.toISOString() && run.preview.latest < WINDOW_END.toISOString()).toBe(true);

    const metric = await post(t, analyst, `/sources/${revenue}/preview`, windowBody);
    await t.services.warehouse.drain();
    const counted = (await get(t, analyst, `/runs/${metric.json().id}`)).json();
    expect(counted.preview).toMatchObject({ units_per_label: {} });
    expect(counted.preview.units).toBeGreaterThan(0);
  });
});

describe('runs', () => {
  it('runs one analysis or preview at a time per connection and counts them per UTC day', async () => {
    const id = await connection({ max_runs_per_day: 2 });
    const { assignment } = await validated(id);
    // Every run slot held (a state only other servers' runs produce): the first preview stays queued.
    await t.database.exec(`INSERT INTO warehouse_run_slots (slot) VALUES (1), (2) ON CONFLICT DO NOTHING;
      UPDATE warehouse_run_slots SET run_id = '${randomUUID()}'`);
    const first = await post(t, admin, `/sources/${assignment}/preview`, windowBody);
    expect(first.statusCode).toBe(202);
    const second = await post(t, admin, `/sources/${assignment}/preview`, windowBody);
    expect(second.statusCode).toBe(409);
    expect(second.json().detail.code).toBe('run_in_progress');
    await t.database.exec('UPDATE warehouse_run_slots SET run_id = NULL');
    await t.services.warehouse.drain();
    expect((await get(t, admin, `/runs/${first.json().id}`)).json().status).toBe('succeeded');
    expect((await post(t, admin, `/sources/${assignment}/preview`, windowBody)).statusCode).toBe(202);
    await t.services.warehouse.drain();
    const limited = await post(t, admin, `/sources/${assignment}/preview`, windowBody);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe(String((Date.parse('2026-11-25T00:00:00Z') - clock.now().getTime()) / 1000));
    expect(limited.json().detail).toMatchObject({ code: 'daily_run_limit_reached', limit: 2, resets_at: '2026-11-25T00:00:00.000Z' });
  });

  it('checks the run request: variant map, window order, sources of the connection', async () => {
    const id = await connection();
    const { assignment, purchase } = await validated(id);
    const exp = await experiment(t, developer);
    const base = { connection_id: id, assignment_source_id: assignment, metric_source_ids: [purchase], ...windowBody };
    const map = await post(t, developer, `/experiments/${exp.id}/runs`, { ...base, variant_map: { a: randomUUID() } });
    expect(map.json().detail[0]).toMatchObject({ type: 'variant', loc: ['body', 'variant_map', 'a'] });
    const order = await post(t, developer, `/experiments/${exp.id}/runs`, { ...base, window_end: base.window_start });
    expect(order.json().detail[0].loc).toEqual(['body', 'window_end']);
    const swapped = await post(t, developer, `/experiments/${exp.id}/runs`, { ...base, assignment_source_id: purchase });
    expect(swapped.json().detail[0]).toMatchObject({ type: 'source_kind', loc: ['body', 'assignment_source_id'] });
    const other = await connection();
    const elsewhere = await post(t, developer, `/experiments/${exp.id}/runs`, { ...base, connection_id: other });
    expect(elsewhere.json().detail[0].type).toBe('source_connection');
    const tooMany = await post(t, developer, `/experiments/${exp.id}/runs`, { ...base, metric_source_ids: Array.from({ length: 11 }, () => randomUUID()) });
    expect(tooMany.json().detail[0]).toMatchObject({ type: 'too_long', loc: ['body', 'metric_source_ids'] });
    expect((await post(t, developer, `/experiments/${randomUUID()}/runs`, base)).json().detail.code).toBe('experiment_not_found');
  });

  it('refuses window times that are not real calendar instants in years 1 to 9999, at the field, without the value', async () => {
    const id = await connection();
    const { assignment, purchase } = await validated(id);
    const exp = await experiment(t, developer);
    const base = { connection_id: id, assignment_source_id: assignment, metric_source_ids: [purchase], ...windowBody };
    const cases: Array<[string, string]> = [
      ['window_start', '2026-02-30T00:00:00Z'], // rolled over to 2026-03-02 before
      ['window_start', '2025-02-29T00:00:00'], // not a leap year
      ['window_start', '2026-04-31T12:00:00+02:00'],
      ['window_end', '2026-01-01T24:00:00Z'],
      ['window_end', '9999-12-31T23:59:59-14:00'], // year 10000 in UTC
      ['window_start', '0001-01-01T00:00:00+01:00'], // year 0 in UTC
    ];
    for (const [field, value] of cases) {
      for (const url of [`/experiments/${exp.id}/runs`, `/sources/${assignment}/preview`]) {
        const body = url.endsWith('/preview') ? { ...windowBody, [field]: value } : { ...base, [field]: value };
        const res = await post(t, developer, url, body);
        expect(res.statusCode, `${url} ${field}=${value}`).toBe(422);
        expect(res.json().detail).toEqual([{ type: 'datetime_parsing', loc: ['body', field], msg: 'Input should be a valid datetime' }]);
        expect(res.body).not.toContain(value);
      }
    }
    // The last real day of February in a leap year, and the edges of the range, are accepted.
    const leap = await post(t, developer, `/sources/${assignment}/preview`, { window_start: '2024-02-29T00:00:00Z', window_end: '9999-12-31T23:59:59+14:00' });
    expect(leap.statusCode, leap.body).toBe(202);
    expect(leap.json()).toMatchObject({ window_start: '2024-02-29T00:00:00.000Z', window_end: '9999-12-31T09:59:59.000Z' });
    await t.services.warehouse.drain();
  });

  it('maps labels through variant_map, lists analyses newest first, and keeps results after the sources go', async () => {
    const id = await connection();
    const { assignment, purchase } = await validated(id);
    const exp = await experiment(t, developer, {
      variants: [
        { name: 'Baseline', is_control: true, traffic_allocation: 50 },
        { name: 'New checkout', traffic_allocation: 50 },
      ],
    });
    const [baseline, fresh] = exp.variants;
    const body = { connection_id: id, assignment_source_id: assignment, metric_source_ids: [purchase], ...windowBody };
    const unmapped = await post(t, developer, `/experiments/${exp.id}/runs`, body);
    await t.services.warehouse.drain();
    clock.advance(1000);
    const mapped = await post(t, developer, `/experiments/${exp.id}/runs`, { ...body, variant_map: { control: baseline.id, treatment: fresh.id } });
    await t.services.warehouse.drain();
    const first = (await get(t, analyst, `/runs/${unmapped.json().id}`)).json();
    expect(first.results[0].variants.map((v: { variant_id: string | null; note?: string }) => [v.variant_id, v.note])).toEqual([
      [baseline.id, 'Not computed: no units'],
      [fresh.id, 'Not computed: no units'],
      [null, 'Not computed: this label matches no variant of the experiment'],
      [null, 'Not computed: this label matches no variant of the experiment'],
    ]);
    expect(first.srm).toMatchObject({ checked: false });
    for (const sourceId of [assignment, purchase]) {
      await t.inject({ method: 'DELETE', url: `${W}/sources/${sourceId}`, headers: admin.headers });
    }
    const listed = (await get(t, analyst, `/experiments/${exp.id}/runs`)).json();
    expect(listed.map((r: { id: string }) => r.id)).toEqual([mapped.json().id, unmapped.json().id]);
    const second = listed.find((r: { id: string }) => r.id === mapped.json().id);
    expect(second.status).toBe('succeeded');
    expect(second.results[0].variants.map((v: { label: string; variant_id: string }) => [v.label, v.variant_id])).toEqual([
      ['control', baseline.id],
      ['treatment', fresh.id],
    ]);
    expect(second.srm).toMatchObject({ checked: true });
  });

  it('fails a run whose server stopped (expired lease) with error_code interrupted, and another server runs queued work', async () => {
    const id = await connection();
    const { assignment } = await validated(id);
    await t.database.exec(`INSERT INTO warehouse_run_slots (slot) VALUES (1), (2) ON CONFLICT DO NOTHING;
      UPDATE warehouse_run_slots SET run_id = '${randomUUID()}'`);
    const queued = await post(t, admin, `/sources/${assignment}/preview`, windowBody);
    // What a crashed server leaves behind: the run marked running with a lease nobody renews.
    await t.database.exec(`UPDATE warehouse_runs SET status = 'running', lease_expires_at = '2026-11-24T22:00:00Z' WHERE id = '${queued.json().id}'`);
    await t.services.warehouse.tick(clock.now());
    const failed = (await get(t, admin, `/runs/${queued.json().id}`)).json();
    expect(failed).toMatchObject({ status: 'failed', error_code: 'interrupted', results: null, preview: null });
    // Queued while this server has no slot, then run by another server once slots free up.
    await t.database.exec(`UPDATE warehouse_run_slots SET run_id = '${randomUUID()}'`);
    const next = await post(t, admin, `/sources/${assignment}/preview`, windowBody);
    // This server's own look for work (started by the POST) ends finding no slot before the slots free up.
    await t.services.warehouse.drain();
    await t.database.exec('UPDATE warehouse_run_slots SET run_id = NULL');
    const other = await t.spawn({ WAREHOUSE_DUCKDB_DIR: dir, WAREHOUSE_CREDENTIALS_KEYS: KEY_1 }, clock);
    await other.services.warehouse.drain();
    expect((await get(t, admin, `/runs/${next.json().id}`)).json().status).toBe('succeeded');
  });
});

describe('key pairs', () => {
  it('regenerates an RSA pair for a key-pair warehouse: the public key once, the private key sealed with the credentials', async () => {
    // The Snowflake driver is optional and not installed here: a service whose Snowflake driver "loads" stands in.
    const drivers = { ...DRIVERS, snowflake: { ...DRIVERS.snowflake, load: async () => true } };
    const config = { ...t.main.config.warehouse };
    const service = createWarehouseService({
      db: t.database.db, audit: createAuditLog({ clock }), clock, config, drivers,
      experiment: async () => undefined, onError: (error) => { throw error; },
    });
    const actor = { kind: 'user' as const, id: admin.id, username: admin.username, email: null, fullName: null, role: 'ADMIN' as const, isSuperuser: false, isActive: true };
    const created = await service.createConnection(actor, {
      name: 'SF', warehouse_type: 'snowflake', settings: { account: 'acme-eu', warehouse: 'ANALYTICS_WH', role: 'ANALYST_RO' }, credentials: { username: 'uplift' },
    });
    const key = await service.regenerateKey(actor, created.id);
    expect(key.public_key).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(key.public_key_fingerprint).toMatch(/^SHA256:/);
    const [row] = await t.database.db.select().from(warehouseConnections).where(eq(warehouseConnections.id, created.id));
    const sealed = createKeyring(config.credentialsKeys!).open(row.encryptedCredentials!, created.id)!;
    expect(sealed.username).toBe('uplift');
    const signature = sign('sha256', Buffer.from('proof'), sealed.private_key);
    expect(verify('sha256', Buffer.from('proof'), key.public_key, signature)).toBe(true);
    await expect(service.createConnection(actor, {
      name: 'SF admin', warehouse_type: 'snowflake', settings: { account: 'a', warehouse: 'w', role: 'accountadmin' }, credentials: { username: 'u' },
    })).rejects.toMatchObject({ statusCode: 422, detail: [expect.objectContaining({ type: 'admin_role_refused', loc: ['body', 'settings', 'role'] })] });
  });
});
