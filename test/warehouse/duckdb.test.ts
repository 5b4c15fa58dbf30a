import { randomBytes } from 'node:crypto';
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
});
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
