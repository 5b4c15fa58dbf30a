import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type UpliftApp } from '../../src/app.js';
import { connectDatabase, type Database } from '../../src/db/client.js';
import { migrate, migrationsDirectory } from '../../src/db/migrate.js';
import { compileFlagSet, flagDefinitionOf, type FlagDefinition } from '../../src/targeting/index.js';
import { testConfig } from '../helpers/test-app.js';

/**
 * Issue 29, upgrade: a database made by the code before environments (migrations up to 0030, flags and a key written
 * as that code wrote them) is migrated, and every flag answers exactly as the code before answered: the evaluator the
 * old code ran over the old rows gives the expected answers, the upgraded app answers through the API key.
 */
const BEFORE = '0030_typed_flags';
const US = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'US' }] }] };
const VARIATIONS = [{ key: 'buy', value: 'Buy now' }, { key: 'classic', value: 'Add to cart' }];

interface OldFlag {
  key: string;
  status: 'ACTIVE' | 'INACTIVE' | 'ARCHIVED';
  rollout: number;
  rules: unknown;
  typed?: { default_variation: string | null; off_variation: string | null; variation_split: unknown; variation_rules: unknown };
}
const FLAGS: OldFlag[] = [
  { key: 'everyone', status: 'ACTIVE', rollout: 100, rules: null },
  { key: 'half', status: 'ACTIVE', rollout: 50, rules: null },
  { key: 'us-only', status: 'ACTIVE', rollout: 100, rules: US },
  { key: 'off', status: 'INACTIVE', rollout: 100, rules: null },
  { key: 'archived', status: 'ARCHIVED', rollout: 100, rules: null },
  { key: 'typed-split', status: 'ACTIVE', rollout: 100, rules: null, typed: { default_variation: null, off_variation: 'classic', variation_split: [{ variation: 'buy', weight: 30 }, { variation: 'classic', weight: 70 }], variation_rules: null } },
  { key: 'typed-off', status: 'INACTIVE', rollout: 100, rules: null, typed: { default_variation: 'buy', off_variation: 'classic', variation_split: null, variation_rules: [{ targeting_rules: US, variation: 'buy' }] } },
];
const USERS = Array.from({ length: 40 }, (_, i) => `user-${i}`);
const CONTEXTS = [{}, { country: 'US' }, { country: 'FR' }];

let database: Database;
const q = <R = Record<string, unknown>>(text: string, params?: unknown[]) => database.session((exec) => exec<R>(text, params));
let drop: () => Promise<void>;
let app: UpliftApp;
const rawKey = `uplk_${randomBytes(32).toString('base64url')}`;

/** An empty database of this test's own: in-memory PGlite, or a fresh schema in TEST_DATABASE_URL. */
async function emptyDatabase(): Promise<{ database: Database; drop(): Promise<void> }> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const db = await connectDatabase({ dataDir: 'memory://' });
    return { database: db, drop: () => db.close() };
  }
  const schema = `t_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const db = await connectDatabase({ databaseUrl: url, searchPath: `${schema},public`, poolSize: 5 });
  return {
    database: db,
    drop: async () => {
      await db.close();
      const cleanup = new pg.Client({ connectionString: url });
      await cleanup.connect();
      await cleanup.query(`DROP SCHEMA ${schema} CASCADE`);
      await cleanup.end();
    },
  };
}

/** The flags as the code before this change compiled them: its wire shape from its columns. */
function oldDefinitions(rows: Array<Record<string, unknown>>): FlagDefinition[] {
  return rows.map((r) => {
    const base = {
      key: r.key as string,
      is_active: r.status === 'ACTIVE',
      rollout_percentage: r.rollout_percentage as number,
      targeting_rules: r.targeting_rules ?? null,
      default_value: r.default_value as boolean,
    };
    return flagDefinitionOf(r.value_type === 'boolean' ? base : {
      ...base,
      value_type: r.value_type, variations: r.variations, default_variation: r.default_variation, off_variation: r.off_variation,
      variation_rules: r.variation_rules, variation_split: r.variation_split,
    } as FlagDefinition);
  });
}

let expected: Map<string, unknown>;
let expectedUser: Map<string, Record<string, boolean>>;

beforeAll(async () => {
  ({ database, drop } = await emptyDatabase());
  // The schema before this change: every migration up to 0030.
  const before = mkdtempSync(join(tmpdir(), 'uplift-before-'));
  for (const file of readdirSync(migrationsDirectory()).filter((f) => f.endsWith('.sql') && f <= `${BEFORE}.sql`)) {
    copyFileSync(join(migrationsDirectory(), file), join(before, file));
  }
  expect(await migrate(database, before)).toContain(BEFORE);
  rmSync(before, { recursive: true });

  const userId = randomUUID();
  await q(`INSERT INTO users (id, username, email, role, is_active) VALUES ($1, 'old-dev', 'old-dev@example.com', 'DEVELOPER', true)`, [userId]);
  await q(
    `INSERT INTO api_keys (id, user_id, name, key_hash, key_prefix, scopes) VALUES ($1, $2, 'old key', $3, $4, '["sdk:ruleset"]'::jsonb)`,
    [randomUUID(), userId, createHash('sha256').update(rawKey).digest('hex'), rawKey.slice(0, 11)],
  );
  for (const f of FLAGS) {
    await q(
      `INSERT INTO feature_flags (id, key, name, status, rollout_percentage, targeting_rules, value_type, variations, default_variation, off_variation, variation_rules, variation_split)
       VALUES ($1, $2, $2, $3, $4, $5::json, $6, $7::json, $8, $9, $10::json, $11::json)`,
      [
        randomUUID(), f.key, f.status, f.rollout, f.rules === null ? null : JSON.stringify(f.rules), f.typed ? 'string' : 'boolean',
        f.typed ? JSON.stringify(VARIATIONS) : null, f.typed?.default_variation ?? null, f.typed?.off_variation ?? null,
        f.typed?.variation_rules ? JSON.stringify(f.typed.variation_rules) : null, f.typed?.variation_split ? JSON.stringify(f.typed.variation_split) : null,
      ],
    );
  }

  // What the code before answered: its evaluator over its rows.
  const rows = await q<Record<string, unknown>>('SELECT * FROM feature_flags ORDER BY key');
  const compiled = compileFlagSet(oldDefinitions(rows));
  expected = new Map();
  expectedUser = new Map();
  for (const user of USERS) {
    for (const [c, context] of CONTEXTS.entries()) {
      const live: Record<string, boolean> = {};
      rows.forEach((row, i) => {
        expected.set(`${row.key}/${user}/${c}`, { flag_key: row.key, ...compiled.flags[i].explain(user, context) });
        if (row.status !== 'ARCHIVED') live[row.key as string] = compiled.flags[i].evaluate(user, context).enabled;
      });
      expectedUser.set(`${user}/${c}`, live);
    }
  }

  // The upgrade: the remaining migrations, then the app of this change over the same database.
  // Every migration after the old code's last one, this change's first (later issues' migrations follow it).
  const applied = await migrate(database);
  expect(applied[0]).toBe('0031_environments');
  expect(applied.every((name) => name > '0030')).toBe(true);
  app = await buildApp(testConfig(), { database, namespace: `upgrade${randomUUID().slice(0, 8)}` });
});

afterAll(async () => {
  await app?.app.close();
  await drop?.();
});

describe('upgrading a database made before environments', () => {
  it('makes production the default, its states every old flag state, and the old key belong to it', async () => {
    expect(await q('SELECT key, is_default FROM environments')).toEqual([{ key: 'production', is_default: true }]);
    expect(await q('SELECT environment FROM api_keys')).toEqual([{ environment: 'production' }]);
    const states = await q<{ n: number }>(`SELECT count(*)::int AS n FROM flag_environment_states WHERE environment = 'production'`);
    expect(states[0].n).toBe(FLAGS.length);
  });

  it('answers every flag, for every user and context, exactly as before', async () => {
    const headers = { 'x-api-key': rawKey };
    for (const user of USERS) {
      for (const [c, context] of CONTEXTS.entries()) {
        const ctx = encodeURIComponent(JSON.stringify(context));
        for (const f of FLAGS) {
          const res = await app.app.inject({ method: 'GET', url: `/api/v1/feature-flags/evaluate/${f.key}?user_id=${user}&context=${ctx}`, headers });
          expect(res.statusCode).toBe(200);
          expect(res.json()).toEqual(expected.get(`${f.key}/${user}/${c}`));
        }
        const all = await app.app.inject({ method: 'GET', url: `/api/v1/feature-flags/user/${user}?context=${ctx}`, headers });
        expect(all.json()).toEqual(expectedUser.get(`${user}/${c}`));
      }
    }
  });

  it('keeps the spec flag routes acting on the default environment', async () => {
    const login = await app.app.inject({ method: 'GET', url: '/api/v1/environments' });
    expect(login.statusCode).toBe(401);
    const ruleset = await app.app.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: { 'x-api-key': rawKey } });
    expect(ruleset.json().flags.map((f: { key: string; status: string }) => [f.key, f.status])).toEqual(
      [...FLAGS].sort((a, b) => a.key.localeCompare(b.key)).map((f) => [f.key, f.status.toLowerCase()]),
    );
  });
});
