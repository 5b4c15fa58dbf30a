/**
 * Metric library definitions analysed in the warehouse (issue 32): the same assignments and events the app counted
 * are loaded into an embedded DuckDB file, and the warehouse analysis of every definition (proportion, mean, ratio by
 * the delta method, percentile- and absolute-capped mean, p90) must give the in-database results' definition block and
 * variant numbers (to 1e-9 relative: SQL sums add in another order).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { definitionEvents, Driver, type Json, type TrackedEvent } from '../results/helpers.js';
import { get, post } from './flow.js';
import { sqlTime } from './seed.js';

let t: TestApp;
let admin: TestUser;
let analyst: TestUser;
let d: Driver;
let dir: string;

/** The Postgres warehouse: the machine's PostgreSQL, a reader role and a schema of its own (as postgres.test.ts). */
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const suffix = randomUUID().replace(/-/g, '').slice(0, 12);
const ROLE = `wh_defs_${suffix}`;
const SCHEMA = `wh_defs_${suffix}`;
const PASSWORD = `pw-${randomUUID()}`;
let owner: pg.Client | undefined;

const EXPOSED_AT = new Date('2026-03-01T00:00:00Z');
const WINDOW = { window_start: '2026-02-28T00:00:00Z', window_end: '2026-03-03T00:00:00Z' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'uplift-wh-defs-'));
  t = await testApp({ env: { WAREHOUSE_DUCKDB_DIR: dir, WAREHOUSE_CREDENTIALS_KEYS: randomBytes(32).toString('base64') } });
  [admin, analyst] = await Promise.all([t.user({ role: 'ADMIN' }), t.user({ role: 'ANALYST' })]);
  const dev = await t.user({ role: 'DEVELOPER' });
  d = new Driver(t, dev, (await t.apiKey(dev, ['sdk:ruleset'])).headers);
}, 180_000);
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
  if (owner) {
    await owner.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await owner.query(`DROP OWNED BY ${ROLE}`).catch(() => undefined);
    await owner.query(`DROP ROLE IF EXISTS ${ROLE}`);
    await owner.end();
  }
});

async function define(body: Json): Promise<Json> {
  const res = await t.call('POST', '/api/v1/metric-definitions', analyst, { ...body, name: t.unique(body.name) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** The i-th event's time: after every exposure, inside the window. */
const eventAt = (i: number) => new Date(EXPOSED_AT.getTime() + 60_000 * (1 + (i % 600)));

/** The assignments as exposures (labelled by variant name) and the counted events, in a DuckDB file. */
async function loadDuckDb(file: string, exposures: Array<[string, string]>, events: TrackedEvent[]): Promise<void> {
  const instance = await DuckDBInstance.create(file);
  const c = await instance.connect();
  await c.run('CREATE TABLE exposures (user_id VARCHAR, variant VARCHAR, ts TIMESTAMP)');
  await c.run('CREATE TABLE events (user_id VARCHAR, event VARCHAR, amount DOUBLE, ts TIMESTAMP)');
  const ex = await c.createAppender('exposures');
  for (const [user, variant] of exposures) {
    ex.appendVarchar(user);
    ex.appendVarchar(variant);
    ex.appendVarchar(sqlTime(EXPOSED_AT));
    ex.endRow();
  }
  ex.closeSync();
  const ev = await c.createAppender('events');
  for (const [i, e] of events.entries()) {
    ev.appendVarchar(e.user_id);
    ev.appendVarchar(e.event_type);
    if (e.value === undefined) ev.appendNull();
    else ev.appendDouble(e.value);
    ev.appendVarchar(sqlTime(eventAt(i)));
    ev.endRow();
  }
  ev.closeSync();
  c.closeSync();
  instance.closeSync();
}

/** The same in a PostgreSQL schema a reader role may read: numeric values and timestamptz event times. */
async function loadPostgres(exposures: Array<[string, string]>, events: TrackedEvent[]): Promise<void> {
  owner = new pg.Client({ connectionString: ADMIN_URL });
  await owner.connect();
  await owner.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}' NOSUPERUSER`);
  await owner.query(`CREATE SCHEMA ${SCHEMA}`);
  await owner.query(`CREATE TABLE ${SCHEMA}.exposures (user_id text, variant text, ts timestamp)`);
  await owner.query(`CREATE TABLE ${SCHEMA}.events (user_id text, event text, amount numeric(12, 2), ts timestamptz)`);
  await owner.query(`INSERT INTO ${SCHEMA}.exposures SELECT * FROM unnest($1::text[], $2::text[]) AS x(u, v), LATERAL (SELECT $3::timestamp) t`,
    [exposures.map((e) => e[0]), exposures.map((e) => e[1]), sqlTime(EXPOSED_AT)]);
  await owner.query(`INSERT INTO ${SCHEMA}.events SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[], $4::timestamptz[])`, [
    events.map((e) => e.user_id), events.map((e) => e.event_type), events.map((e) => e.value ?? null), events.map((_, i) => eventAt(i).toISOString()),
  ]);
  await owner.query(`GRANT USAGE ON SCHEMA ${SCHEMA} TO ${ROLE}`);
  await owner.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${SCHEMA} TO ${ROLE}`);
}

/** Equal, numbers to 1e-9 relative (or absolute below 1). */
function expectClose(actual: unknown, expected: unknown, path = ''): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    expect(Math.abs(actual - expected), `${path}: ${actual} vs ${expected}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected)));
  } else if (expected !== null && typeof expected === 'object') {
    expect(actual !== null && typeof actual === 'object', path).toBe(true);
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [key, value] of Object.entries(expected)) expectClose((actual as Json)[key], value, `${path}.${key}`);
  } else expect(actual, path).toEqual(expected);
}

describe('metric library definitions in the warehouse analysis', () => {
  let defs: Record<string, Json>;
  let exp: Json;
  /** Per warehouse, its connection and the validated assignment and event sources. */
  const warehouses: Record<string, { connection: string; assignment: string; events: string }> = {};

  async function sources(connection: string, schema: string) {
    const source = async (body: Json) => {
      const res = await post(t, admin, '/sources', { connection_id: connection, ...body });
      expect(res.statusCode, res.body).toBe(201);
      expect((await post(t, admin, `/sources/${res.json().id}/validate`)).json()).toEqual({ valid: true, errors: [] });
      return res.json().id as string;
    };
    const assignment = await source({ kind: 'assignment', name: 'Exposures', table: `${schema}.exposures`, columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'ts' } });
    const events = await source({
      kind: 'metric', name: 'Events', table: `${schema}.events`, metric_type: 'mean',
      columns: { unit_id: 'user_id', event_at: 'ts', value: 'amount', event_name: 'event' },
    });
    return { connection, assignment, events };
  }

  async function connect(body: Json): Promise<string> {
    const created = await post(t, admin, '/connections', { name: t.unique(body.warehouse_type), ...body });
    expect(created.statusCode, created.body).toBe(201);
    return created.json().id;
  }

  beforeAll(async () => {
    defs = {
      proportion: await define({ name: 'Purchased', kind: 'proportion', event_name: 'purchase' }),
      mean: await define({ name: 'Revenue per user', kind: 'mean', event_name: 'revenue', aggregate: 'sum' }),
      ratio: await define({
        name: 'Revenue per page view', kind: 'ratio', capping: { type: 'percentile', p: 0.95 },
        numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'page_view', aggregate: 'count' },
      }),
      capped: await define({ name: 'Capped revenue', kind: 'mean', event_name: 'revenue', aggregate: 'sum', capping: { type: 'percentile', p: 0.9 } }),
      absolute: await define({ name: 'Revenue capped at 45', kind: 'mean', event_name: 'revenue', aggregate: 'sum', capping: { type: 'absolute', value: 45 } }),
      views: await define({ name: 'Page views', kind: 'mean', event_name: 'page_view', aggregate: 'count' }),
      p90: await define({ name: 'p90 load time', kind: 'quantile', event_name: 'load_time', aggregate: 'sum', quantile: 0.9 }),
    };
    exp = await d.experiment({
      metrics: Object.values(defs).map((def, i) => ({ name: def.name, event_name: 'purchase', metric_definition_id: def.id, is_primary: i === 0 })),
    });
    const treatment = exp.variants.find((v: Json) => !v.is_control).id;
    const users = Array.from({ length: 400 }, (_, i) => `u${i}`);
    const assigned = await d.assign(exp.key, users);
    const tracked = definitionEvents(users, assigned, treatment, exp.key);
    await d.track(tracked);
    const names = new Map<string, string>(exp.variants.map((v: Json) => [v.id, v.name]));
    const exposures: Array<[string, string]> = [...assigned].map(([u, v]) => [u, names.get(v)!]);

    await loadDuckDb(join(dir, 'shop.duckdb'), exposures, tracked);
    warehouses.duckdb = await sources(await connect({ warehouse_type: 'duckdb', settings: { path: 'shop.duckdb' }, credentials: {} }), 'main');
    await loadPostgres(exposures, tracked);
    const target = new URL(ADMIN_URL);
    warehouses.postgres = await sources(await connect({
      warehouse_type: 'postgres', settings: { host: target.hostname, port: Number(target.port || 5432), database: target.pathname.slice(1), ssl: false },
      credentials: { username: ROLE, password: PASSWORD },
    }), SCHEMA);
  }, 300_000);

  for (const type of ['duckdb', 'postgres']) {
    it(`${type}: gives the in-database results of every definition, the definition block and the variant numbers`, async () => {
      const { connection, assignment, events } = warehouses[type];
      const started = await post(t, admin, `/experiments/${exp.id}/runs`, {
        connection_id: connection, assignment_source_id: assignment, metric_source_ids: [], ...WINDOW,
        metric_definitions: Object.values(defs).map((def) => ({ metric_definition_id: def.id, source_id: events })),
      });
      expect(started.statusCode, started.body).toBe(202);
      await t.services.warehouse.drain();
      const run = (await get(t, admin, `/runs/${started.json().id}`)).json();
      expect(run.status, JSON.stringify(run)).toBe('succeeded');
      expect(run.results).toEqual([]);
      expect(run.sql).toHaveLength(1 + Object.keys(defs).length);
      expect(run.definition_results).toHaveLength(Object.keys(defs).length);

      const payload = await d.get(`/api/v1/results/${exp.id}`);
      for (const [name, def] of Object.entries(defs)) {
        const db = payload.metrics.find((m: Json) => m.definition?.metric_definition_id === def.id);
        const wh = run.definition_results.find((r: Json) => r.metric_definition_id === def.id);
        expect(wh.metric_source_id).toBe(events);
        expect(wh.test, name).toBe(db.test);
        expectClose(wh.definition, db.definition, name);
        expectClose(wh.variants.map(({ label: _l, ...v }: Json) => v), db.variants, name);
        expect(wh.variants.map((v: Json) => v.label)).toEqual(exp.variants.map((v: Json) => v.name));
      }
      // The planted data reach every path: caps touch users, the quantile has its interval, the ratio its test.
      const block = (key: string) => run.definition_results.find((r: Json) => r.metric_definition_id === defs[key].id).definition;
      expect(block('capped').capping.users_capped).toBeGreaterThan(0);
      expect(block('absolute').capping).toMatchObject({ type: 'absolute', cap: 45 });
      expect(block('absolute').capping.users_capped).toBeGreaterThan(0);
      expect(block('ratio').capping.users_capped).toBeGreaterThan(0);
      expect(block('p90').variants[1].difference_ci).not.toBeNull();
      expect(block('ratio').variants[1].difference_ci).not.toBeNull();
      expect(run.sql.join('\n')).toContain('PERCENTILE_CONT(0.9) WITHIN GROUP');
      // Event names and labels are bound, never spliced into the text.
      expect(run.sql.join('\n')).not.toMatch(/'revenue'|'control'/);
    });
  }

  it('refuses an unknown definition, a source that cannot tell events apart, and more than 10 metrics (422 at the field)', async () => {
    const { connection, assignment, events } = warehouses.duckdb;
    const plain = await post(t, admin, '/sources', {
      kind: 'metric', connection_id: connection, name: 'No names', table: 'main.events', metric_type: 'mean', columns: { unit_id: 'user_id', event_at: 'ts', value: 'amount' },
    });
    await post(t, admin, `/sources/${plain.json().id}/validate`);
    const base = { connection_id: connection, assignment_source_id: assignment, metric_source_ids: [], ...WINDOW };
    const res = await post(t, admin, `/experiments/${exp.id}/runs`, {
      ...base,
      metric_definitions: [
        { metric_definition_id: randomUUID(), source_id: events },
        { metric_definition_id: defs.mean.id, source_id: plain.json().id },
      ],
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().detail.map((i: Json) => [i.type, i.loc])).toEqual([
      ['value_error', ['body', 'metric_definitions', 0, 'metric_definition_id']],
      ['source_columns', ['body', 'metric_definitions', 1, 'source_id']],
    ]);
    const none = await post(t, admin, `/experiments/${exp.id}/runs`, base);
    expect(none.json().detail[0]).toMatchObject({ type: 'too_short', loc: ['body', 'metric_source_ids'] });
    const many = await post(t, admin, `/experiments/${exp.id}/runs`, {
      ...base, metric_definitions: Array.from({ length: 11 }, () => ({ metric_definition_id: defs.mean.id, source_id: events })),
    });
    expect(many.json().detail[0]).toMatchObject({ type: 'too_long', loc: ['body', 'metric_definitions'] });
    const mixed = await post(t, admin, `/experiments/${exp.id}/runs`, {
      ...base, metric_source_ids: [events], metric_definitions: Array.from({ length: 10 }, () => ({ metric_definition_id: defs.mean.id, source_id: events })),
    });
    expect(mixed.json().detail[0]).toMatchObject({ type: 'too_long', loc: ['body', 'metric_definitions'] });
  });
});
