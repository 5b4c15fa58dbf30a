/**
 * Warehouse analysis on an embedded DuckDB file, for a first try (README "Warehouse analysis in five commands").
 * Writes DATA_DIR/warehouse/demo.duckdb (2,000 users' exposures and purchases of a made-up checkout test), then
 * drives a running Uplift through its API, printing every call: a connection, an assignment source, a metric
 * source, their validation, an experiment, and an analysis whose result it prints.
 * Run: npx tsx scripts/warehouse-demo.ts   (BASE_URL, UPLIFT_EMAIL, UPLIFT_PASSWORD, DATA_DIR as for the server)
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const BASE = process.env.BASE_URL ?? 'http://localhost:8000';
const EMAIL = process.env.UPLIFT_EMAIL ?? 'admin@example.com';
const PASSWORD = process.env.UPLIFT_PASSWORD ?? 'Change-me-1';
const DIR = join(process.env.DATA_DIR ?? './data', 'warehouse');
const W = '/api/v1/warehouse/analysis';

async function writeDemoFile(): Promise<void> {
  mkdirSync(DIR, { recursive: true });
  const file = join(DIR, 'demo.duckdb');
  rmSync(file, { force: true });
  const instance = await DuckDBInstance.create(file);
  const c = await instance.connect();
  await c.run(`CREATE TABLE exposures AS
    SELECT 'user-' || i AS user_id, CASE WHEN hash(i) % 2 = 0 THEN 'control' ELSE 'treatment' END AS variant,
      TIMESTAMP '2026-01-05' + to_minutes(CAST(hash(i * 31) % 20000 AS BIGINT)) AS exposed_at
    FROM range(2000) t(i)`);
  // Treatment converts more often (about 14% against 10%) and spends a little more.
  await c.run(`CREATE TABLE purchases AS
    SELECT user_id, exposed_at + to_minutes(CAST(hash(user_id) % 4000 AS BIGINT)) AS purchased_at,
      CAST(20 + hash(user_id || 'a') % 60 + CASE WHEN variant = 'treatment' THEN 5 ELSE 0 END AS DOUBLE) AS amount
    FROM exposures WHERE hash(user_id || 'p') % 100 < CASE WHEN variant = 'treatment' THEN 14 ELSE 10 END`);
  c.closeSync();
  instance.closeSync();
  console.log(`wrote ${file}`);
}

let token = '';
async function call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
  console.log(`${method} ${path}${body ? ` ${JSON.stringify(body)}` : ''}`);
  const res = await fetch(`${BASE}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as T;
  if (!res.ok) throw new Error(`${res.status}: ${JSON.stringify(json)}`);
  return json;
}

await writeDemoFile();
token = (await call<{ access_token: string }>('POST', '/api/v1/auth/login', { email: EMAIL, password: PASSWORD })).access_token;
const connection = await call('POST', `${W}/connections`, { name: 'Demo DuckDB', warehouse_type: 'duckdb', settings: { path: 'demo.duckdb' }, credentials: {} });
const assignment = await call('POST', `${W}/sources`, {
  kind: 'assignment', connection_id: connection.id, name: 'Checkout exposures', table: 'main.exposures',
  columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'exposed_at' },
});
const purchase = await call('POST', `${W}/sources`, {
  kind: 'metric', connection_id: connection.id, name: 'Purchased within 3 days', table: 'main.purchases', metric_type: 'proportion',
  columns: { unit_id: 'user_id', event_at: 'purchased_at' }, conversion_window_hours: 72,
});
const revenue = await call('POST', `${W}/sources`, {
  kind: 'metric', connection_id: connection.id, name: 'Revenue per user', table: 'main.purchases', metric_type: 'mean',
  columns: { unit_id: 'user_id', event_at: 'purchased_at', value: 'amount' },
});
for (const source of [assignment, purchase, revenue]) await call('POST', `${W}/sources/${source.id}/validate`);
const experiment = await call('POST', '/api/v1/experiments/', {
  name: 'Checkout redesign (warehouse demo)', key: `checkout-demo-${Date.now()}`,
  variants: [{ name: 'control', is_control: true, traffic_allocation: 50 }, { name: 'treatment', traffic_allocation: 50 }],
  metrics: [{ name: 'Purchase', event_name: 'purchase', is_primary: true }],
});
const run = await call('POST', `${W}/experiments/${experiment.id}/runs`, {
  connection_id: connection.id, assignment_source_id: assignment.id, metric_source_ids: [purchase.id, revenue.id],
  window_start: '2026-01-01T00:00:00Z', window_end: '2026-02-01T00:00:00Z',
});
let result = run;
for (let i = 0; i < 60 && (result.status === 'queued' || result.status === 'running'); i++) {
  await new Promise((r) => setTimeout(r, 500));
  result = await call('GET', `${W}/runs/${run.id}`);
}
console.log(JSON.stringify({ status: result.status, results: result.results, srm: result.srm, error_code: result.error_code }, null, 2));
console.log(`\nThe run with the SQL it sent:\ncurl -s ${BASE}${W}/runs/${run.id} -H 'authorization: Bearer ${token}'`);
