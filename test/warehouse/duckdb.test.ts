import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { analyseAndCheck, get, post } from './flow.js';
import { seedData, sqlTime } from './seed.js';

let t: TestApp;
let admin: TestUser;
let dir: string;

/** A DuckDB file made by the test, closed before the app opens it (read only). */
async function seedFile(name: string): Promise<void> {
  const data = seedData();
  const instance = await DuckDBInstance.create(join(dir, name));
  const c = await instance.connect();
  await c.run('CREATE TABLE exposures (user_id VARCHAR, variant VARCHAR, ts TIMESTAMP, country VARCHAR)');
  await c.run('CREATE TABLE events (user_id VARCHAR, ts TIMESTAMP, amount DOUBLE)');
  const appender = await c.createAppender('exposures');
  for (const e of data.exposures) {
    appender.appendVarchar(e.user_id);
    appender.appendVarchar(e.variant);
    appender.appendVarchar(sqlTime(e.ts));
    appender.appendVarchar(e.country);
    appender.endRow();
  }
  appender.closeSync();
  for (const e of data.events) {
    await c.run('INSERT INTO events VALUES ($1, CAST($2 AS TIMESTAMP), $3)', [e.user_id, sqlTime(e.ts), e.amount]);
  }
  c.closeSync();
  instance.closeSync();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'uplift-wh-'));
  t = await testApp({ env: { WAREHOUSE_DUCKDB_DIR: dir, WAREHOUSE_CREDENTIALS_KEYS: randomBytes(32).toString('base64') } });
  admin = await t.user({ role: 'ADMIN' });
  await seedFile('shop.duckdb');
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
