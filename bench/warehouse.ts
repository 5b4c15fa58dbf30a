/**
 * Warehouse analysis benchmark (issue 16): one analysis of 1,000,000 exposed units and 3,000,000 events (a
 * diagnostics statement, a proportion metric and a capped mean metric), through the API (POST the run, let the
 * queue execute it, GET the result) beside the same three aggregates written by hand and run on the same driver.
 * On DuckDB (a file the script creates) and on PostgreSQL (a schema and a read-only role on BENCH_DATABASE_URL).
 * The app runs in this process on embedded PGlite. The machine is shared: module and hand-written queries are
 * measured in alternating rounds (ROUNDS, default 3) and the medians compared.
 * Run: npx tsx bench/warehouse.ts   (target: the module within 1.5x of the hand-written queries)
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { BENCH_DATABASE_URL, machine, writeSection } from './lib.js';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const UNITS = 1_000_000;
const EVENTS = 3_000_000;
const W = '/api/v1/warehouse/analysis';
const WINDOW = { window_start: '2026-03-01T00:00:00Z', window_end: '2026-03-15T00:00:00Z' };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () => loadavg()[0].toFixed(1);

/** The aggregates of the analysis as an analyst would write them (Postgres and DuckDB read the same text). */
function handQueries(table: (name: string) => string): string[] {
  const firsts = `SELECT user_id, MIN(variant) AS variant, MIN(ts) AS exposed_at
    FROM ${table('exposures')} WHERE ts >= '2026-03-01' AND ts < '2026-03-15'
    GROUP BY user_id HAVING MIN(variant) = MAX(variant)`;
  return [
    `SELECT CASE WHEN MIN(variant) = MAX(variant) THEN MIN(variant) END AS variant, COUNT(*) FROM (
       SELECT user_id, MIN(variant) AS variant, MAX(variant) AS max_variant FROM ${table('exposures')}
       WHERE ts >= '2026-03-01' AND ts < '2026-03-15' GROUP BY user_id) u
     GROUP BY CASE WHEN variant = max_variant THEN variant END`,
    `WITH f AS (${firsts})
     SELECT variant, COUNT(*) AS units, SUM(converted) AS conversions FROM (
       SELECT f.user_id, f.variant, MAX(CASE WHEN e.ts >= f.exposed_at AND e.ts < f.exposed_at + INTERVAL '72 hours' THEN 1 ELSE 0 END) AS converted
       FROM f LEFT JOIN ${table('events')} e ON e.user_id = f.user_id AND e.ts >= '2026-03-01' AND e.ts < '2026-03-15'
       GROUP BY f.user_id, f.variant) p GROUP BY variant`,
    `WITH f AS (${firsts})
     SELECT variant, COUNT(*) AS units, SUM(v) AS total, SUM(v * v) AS total_squares FROM (
       SELECT f.variant, LEAST(COALESCE(SUM(CASE WHEN e.ts >= f.exposed_at THEN e.amount END), 0), 500) AS v
       FROM f LEFT JOIN ${table('events')} e ON e.user_id = f.user_id AND e.ts >= '2026-03-01' AND e.ts < '2026-03-15'
       GROUP BY f.user_id, f.variant) p GROUP BY variant`,
  ];
}

interface Backend {
  name: string;
  connection: Record<string, unknown>;
  schema: string;
  hand(): Promise<void>;
  close(): Promise<void>;
}

async function duckdbBackend(dir: string): Promise<Backend> {
  const file = join(dir, 'bench.duckdb');
  const instance = await DuckDBInstance.create(file);
  const c = await instance.connect();
  await c.run(`CREATE TABLE exposures AS SELECT 'u' || i AS user_id, CASE WHEN i % 2 = 0 THEN 'control' ELSE 'treatment' END AS variant,
    TIMESTAMP '2026-03-01' + to_seconds(CAST((i * 7919) % 1209600 AS BIGINT)) AS ts FROM range(${UNITS}) t(i)`);
  await c.run(`INSERT INTO exposures SELECT user_id, variant, ts + INTERVAL 1 HOUR FROM exposures WHERE hash(user_id) % 5 = 0`);
  await c.run(`CREATE TABLE events AS SELECT 'u' || ((j * 104729) % ${UNITS}) AS user_id,
    TIMESTAMP '2026-03-01' + to_seconds(CAST((j * 15485863) % 1209600 AS BIGINT)) AS ts, CAST((j % 1000) / 10.0 AS DOUBLE) AS amount
    FROM range(${EVENTS}) t(j)`);
  c.closeSync();
  instance.closeSync();
  const reader = await DuckDBInstance.fromCache(file, { access_mode: 'READ_ONLY' });
  const hc = await reader.connect();
  await hc.run("SET TimeZone = 'UTC'");
  return {
    name: 'DuckDB (embedded file)',
    connection: { warehouse_type: 'duckdb', settings: { path: 'bench.duckdb' }, credentials: {} },
    schema: 'main',
    async hand() {
      for (const q of handQueries((n) => `main.${n}`)) await hc.runAndReadAll(q);
    },
    close: async () => hc.closeSync(),
  };
}

async function postgresBackend(): Promise<Backend> {
  const suffix = randomUUID().replace(/-/g, '').slice(0, 10);
  const schema = `wh_bench_${suffix}`;
  const role = `wh_bench_${suffix}`;
  const password = randomUUID();
  const admin = new pg.Client({ connectionString: BENCH_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}' NOSUPERUSER`);
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE TABLE ${schema}.exposures AS SELECT 'u' || i AS user_id, CASE WHEN i % 2 = 0 THEN 'control' ELSE 'treatment' END AS variant,
    TIMESTAMP '2026-03-01' + make_interval(secs => (i::bigint * 7919) % 1209600) AS ts FROM generate_series(0, ${UNITS - 1}) i`);
  await admin.query(`INSERT INTO ${schema}.exposures SELECT user_id, variant, ts + INTERVAL '1 hour' FROM ${schema}.exposures WHERE hashtext(user_id) % 5 = 0`);
  await admin.query(`CREATE TABLE ${schema}.events AS SELECT 'u' || ((j::bigint * 104729) % ${UNITS}) AS user_id,
    TIMESTAMP '2026-03-01' + make_interval(secs => (j::bigint * 15485863) % 1209600) AS ts, (j % 1000) / 10.0 AS amount
    FROM generate_series(0, ${EVENTS - 1}) j`);
  await admin.query(`ANALYZE ${schema}.exposures; ANALYZE ${schema}.events`);
  await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
  const url = new URL(BENCH_DATABASE_URL);
  const endpoint = { host: url.hostname, port: Number(url.port || 5432), database: url.pathname.slice(1) };
  const reader = new pg.Client({ ...endpoint, user: role, password });
  await reader.connect();
  await reader.query("SET TIME ZONE 'UTC'");
  return {
    name: 'PostgreSQL (local server)',
    connection: { warehouse_type: 'postgres', settings: endpoint, credentials: { username: role, password } },
    schema,
    async hand() {
      for (const q of handQueries((n) => `${schema}.${n}`)) await reader.query(q);
    },
    async close() {
      await reader.end();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.query(`DROP ROLE ${role}`);
      await admin.end();
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'uplift-wh-bench-'));
const config = loadConfig({
  ENVIRONMENT: 'test', DATA_DIR: 'memory://', LOG_LEVEL: 'warn', RATE_LIMIT_ENABLED: 'false', BCRYPT_ROUNDS: '4',
  WAREHOUSE_DUCKDB_DIR: dir, WAREHOUSE_CREDENTIALS_KEYS: randomBytes(32).toString('base64'),
  FIRST_SUPERUSER_EMAIL: 'bench@example.com', FIRST_SUPERUSER_PASSWORD: 'Bench-passw0rd',
});
const { app, services } = await buildApp(config);
const rows: string[] = [];
try {
  await services.users.ensureSuperuser(config.firstSuperuser!);
  const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'bench@example.com', password: 'Bench-passw0rd' } });
  const headers = { authorization: `Bearer ${login.json().access_token}` };
  const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await app.inject({ method, url, headers, payload });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const experiment = await call('POST', '/api/v1/experiments/', {
    name: 'Warehouse bench', key: `wh-bench-${randomUUID().slice(0, 6)}`,
    variants: [{ name: 'control', is_control: true, traffic_allocation: 50 }, { name: 'treatment', traffic_allocation: 50 }],
    metrics: [{ name: 'Purchase', event_name: 'purchase', is_primary: true }],
  });
  for (const make of [() => duckdbBackend(dir), () => postgresBackend()]) {
    const started = performance.now();
    const backend = await make();
    console.log(`${backend.name}: data ready in ${Math.round(performance.now() - started)} ms`);
    try {
      const connection = await call('POST', `${W}/connections`, { name: backend.name, ...backend.connection, max_runs_per_day: 200, query_timeout_seconds: 600 });
      const source = (body: object) => call('POST', `${W}/sources`, { connection_id: connection.id, ...body });
      const assignment = await source({ kind: 'assignment', name: 'Exposures', table: `${backend.schema}.exposures`, columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'ts' } });
      const purchase = await source({ kind: 'metric', name: 'Purchase', table: `${backend.schema}.events`, columns: { unit_id: 'user_id', event_at: 'ts' }, conversion_window_hours: 72 });
      const revenue = await source({ kind: 'metric', name: 'Revenue', table: `${backend.schema}.events`, metric_type: 'mean', columns: { unit_id: 'user_id', event_at: 'ts', value: 'amount' }, cap_value: 500 });
      for (const s of [assignment, purchase, revenue]) await call('POST', `${W}/sources/${s.id}/validate`);
      const moduleTimes: number[] = [];
      const handTimes: number[] = [];
      const loads = [load()];
      let last: Record<string, unknown> = {};
      for (let round = 0; round < ROUNDS; round++) {
        let t0 = performance.now();
        const run = await call('POST', `/api/v1/warehouse/analysis/experiments/${experiment.id}/runs`, {
          connection_id: connection.id, assignment_source_id: assignment.id, metric_source_ids: [purchase.id, revenue.id], ...WINDOW,
        });
        await services.warehouse.drain();
        last = await call('GET', `${W}/runs/${run.id}`);
        moduleTimes.push(performance.now() - t0);
        if (last.status !== 'succeeded') throw new Error(`run ${String(last.status)}: ${String(last.error_message)}`);
        t0 = performance.now();
        await backend.hand();
        handTimes.push(performance.now() - t0);
        console.log(`${backend.name} round ${round + 1}: module ${Math.round(moduleTimes.at(-1)!)} ms, by hand ${Math.round(handTimes.at(-1)!)} ms`);
      }
      loads.push(load());
      const diagnostics = last.diagnostics as { units_per_label: Record<string, number>; excluded_multiple_variants: number };
      const units = Object.values(diagnostics.units_per_label).reduce((a, b) => a + b, 0);
      const m = median(moduleTimes);
      const h = median(handTimes);
      rows.push(`| ${backend.name} | ${units.toLocaleString('en')} | ${Math.round(m)} | ${Math.round(h)} | ${(m / h).toFixed(2)} | ${moduleTimes.map(Math.round).join(', ')} / ${handTimes.map(Math.round).join(', ')} | ${loads.join(' → ')} |`);
    } finally {
      await backend.close();
    }
  }
} finally {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
}

writeSection('warehouse', `## Warehouse analysis: ${UNITS.toLocaleString('en')} exposed units, ${EVENTS.toLocaleString('en')} events (issue 16)

\`npx tsx bench/warehouse.ts\` (ROUNDS=${ROUNDS}), ${machine()}. The machine is shared with other work, so absolute times
are noisy; the ratio compares medians of module and hand-written runs taken in alternating rounds of the same process.
"Module" is the whole analysis through the API: POST the run (three statements: diagnostics, a proportion metric with a
72-hour conversion window, a mean metric capped at 500), the queue executing it, GET the result with its statistics.
"By hand" is the same three aggregates written directly in SQL and run on the same driver. Target: module within 1.5x.

| Warehouse | exposed units analysed | module median ms | by hand median ms | ratio | all rounds (module / hand) | 1-min load |
|---|---|---|---|---|---|---|
${rows.join('\n')}
`);
console.log(rows.join('\n'));
