import { randomBytes } from 'node:crypto';
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { analyseAndCheck, get, post } from './flow.js';
import { seedDuckDb } from './seed.js';

let t: TestApp;
let admin: TestUser;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'uplift-wh-'));
  t = await testApp({ env: { WAREHOUSE_DUCKDB_DIR: dir, WAREHOUSE_CREDENTIALS_KEYS: randomBytes(32).toString('base64') } });
  admin = await t.user({ role: 'ADMIN' });
  await seedDuckDb(join(dir, 'shop.duckdb'));
}, 180_000);
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('warehouse analysis on an embedded DuckDB file', () => {
  it('analyses seeded exposures and events end to end', async () => {
    const created = await post(t, admin, '/connections', { name: 'Local DuckDB', warehouse_type: 'duckdb', settings: { path: 'shop.duckdb' }, credentials: {} });
    expect(created.statusCode, created.body).toBe(201);
    const connection = created.json();
    expect(connection).toMatchObject({ warehouse_type: 'duckdb', status: 'active', query_timeout_seconds: 300, max_runs_per_day: 20, bytes_limit: null });
    const tested = await post(t, admin, `/connections/${connection.id}/test`);
    expect(tested.json()).toMatchObject({ ok: true, error_code: null });
    await analyseAndCheck(t, admin, connection.id, 'main');
  });

  it("never reads the host's files through a view stored in the database file", async () => {
    // A file whose view reads /etc/passwd: with external access on, a preview's labels would be its lines.
    const file = join(dir, 'leaky.duckdb');
    const writer = await DuckDBInstance.create(file);
    const connection = await writer.connect();
    await connection.run("CREATE VIEW exposures AS SELECT 'u1' AS user_id, content AS variant, TIMESTAMP '2026-03-02 00:00:00' AS ts FROM read_text('/etc/passwd')");
    connection.closeSync();
    writer.closeSync();
    const created = await post(t, admin, '/connections', { name: 'Leaky', warehouse_type: 'duckdb', settings: { path: 'leaky.duckdb' }, credentials: {} });
    const source = await post(t, admin, '/sources', {
      kind: 'assignment', connection_id: created.json().id, name: 'Leaky', table: 'main.exposures',
      columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'ts' },
    });
    const sourceId = source.json().id as string;
    // Validation reads metadata only, which names the view's columns without reading the file.
    expect((await post(t, admin, `/sources/${sourceId}/validate`)).json()).toEqual({ valid: true, errors: [] });
    const preview = await post(t, admin, `/sources/${sourceId}/preview`, { window_start: '2026-03-01T00:00:00Z', window_end: '2026-03-15T00:00:00Z' });
    expect(preview.statusCode, preview.body).toBe(202);
    await t.services.warehouse.drain();
    const run = await get(t, admin, `/runs/${preview.json().id}`);
    expect(run.json()).toMatchObject({ status: 'failed', error_code: 'query_failed', preview: null });
    expect(run.json().error_message).toMatch(/disabled by configuration/);
    expect(run.body).not.toContain('root:');
  });

  it('lists connectors with DuckDB and Postgres available', async () => {
    const viewer = await t.user();
    const res = await get(t, viewer, '/connectors');
    expect(res.statusCode).toBe(200);
    const byType = Object.fromEntries(res.json().map((c: { type: string }) => [c.type, c]));
    expect(Object.keys(byType).sort()).toEqual(['bigquery', 'clickhouse', 'databricks', 'duckdb', 'postgres', 'redshift', 'snowflake']);
    expect(byType.duckdb).toEqual({ type: 'duckdb', available: true, bills_by_bytes: false, key_pair: false });
    expect(byType.bigquery).toMatchObject({ bills_by_bytes: true });
    expect(byType.snowflake).toMatchObject({ key_pair: true });
  });
});
