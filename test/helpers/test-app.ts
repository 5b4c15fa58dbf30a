import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import pg from 'pg';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type UpliftApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { connectDatabase, type Database } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import type { Role } from '../../src/platform/roles.js';
import { fixedClock } from '../../src/platform/clock.js';

export const TEST_PASSWORD = 'Passw0rd!x';

export interface TestUser {
  id: string;
  email: string;
  username: string;
  token: string;
  headers: Record<string, string>;
}

export interface TestOptions {
  env?: Record<string, string>;
  clock?: ReturnType<typeof fixedClock>;
  /** Adjusts settings no environment variable reaches (a fixed limit a test shortens). */
  configure?: (config: Config) => void;
}

/**
 * One database per test file: in-memory PGlite by default, or a fresh schema in the server named by
 * TEST_DATABASE_URL (dropped at close). TEST_REDIS_URL adds Redis under a unique key prefix.
 */
export async function testDatabase(): Promise<{ database: Database; drop(): Promise<void> }> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const database = await connectDatabase({ dataDir: 'memory://', pgliteTemplate: pgliteTemplate() });
    await migrate(database);
    return { database, drop: () => database.close() };
  }
  const schema = `t_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const database = await connectDatabase({ databaseUrl: url, searchPath: `${schema},public`, poolSize: 10 });
  await migrate(database);
  return {
    database,
    drop: async () => {
      await database.close();
      const cleanup = new pg.Client({ connectionString: url });
      await cleanup.connect();
      await cleanup.query(`DROP SCHEMA ${schema} CASCADE`);
      await cleanup.end();
    },
  };
}

let template: Blob | undefined;
/** The migrated data directory test/global-setup.ts dumped (read once per test file); none outside vitest's run. */
function pgliteTemplate(): Blob | undefined {
  if (template || !process.env.VITEST) return template;
  const path = inject('pgliteTemplate');
  if (path) template = new Blob([readFileSync(path)]);
  return template;
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    ENVIRONMENT: 'test',
    BCRYPT_ROUNDS: '4',
    RATE_LIMIT_ENABLED: 'false',
    SECRET_KEY: 'test-secret-key-that-is-long-enough-0123456789',
    ...(process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {}),
    ...env,
  });
}

export class TestApp {
  private counter = 0;
  private readonly extra: UpliftApp[] = [];

  constructor(
    readonly main: UpliftApp,
    private readonly db: { database: Database; drop(): Promise<void> },
    private readonly namespace: string,
  ) {}

  get app() {
    return this.main.app;
  }
  get services() {
    return this.main.services;
  }
  get database() {
    return this.db.database;
  }

  inject(opts: InjectOptions): Promise<LightMyRequestResponse> {
    return this.main.app.inject(opts);
  }

  /** Another app over the same database (another profile, or a second API process). */
  async spawn(env: Record<string, string> = {}, clock?: ReturnType<typeof fixedClock>): Promise<UpliftApp> {
    const other = await buildApp(testConfig(env), { database: this.db.database, namespace: this.namespace, clock });
    this.extra.push(other);
    return other;
  }

  unique(label = 'u'): string {
    this.counter += 1;
    return `${label}${this.counter}${randomUUID().slice(0, 8)}`;
  }

  /** An account made through the service (as an admin would), signed in through the API. */
  async user(opts: { role?: Role; superuser?: boolean; active?: boolean; password?: string } = {}): Promise<TestUser> {
    const username = this.unique('user');
    const email = `${username}@example.com`;
    const password = opts.password ?? TEST_PASSWORD;
    const view = await this.services.users.create(null, { username, email, password, is_superuser: opts.superuser ?? false });
    if (opts.role && opts.role !== 'VIEWER') await this.services.users.setRole(view.id, opts.role);
    const res = await this.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
    if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
    const token = res.json().access_token as string;
    if (opts.active === false) {
      await this.database.exec(`UPDATE users SET is_active = false WHERE id = '${view.id}'`);
    }
    return { id: view.id, email, username, token, headers: { authorization: `Bearer ${token}` } };
  }

  /** One account per role given, made together (as `user`). */
  users(...roles: Role[]): Promise<TestUser[]> {
    return Promise.all(roles.map((role) => this.user({ role })));
  }

  /** One request as `user` (anonymous without one), with an optional JSON body. */
  call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, user?: TestUser, payload?: unknown): Promise<LightMyRequestResponse> {
    return this.inject({ method, url, headers: user?.headers ?? {}, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  }

  async apiKey(user: TestUser, scopes: string[] = []): Promise<{ key: string; id: string; headers: Record<string, string> }> {
    const res = await this.inject({ method: 'POST', url: '/api/v1/api-keys', headers: user.headers, payload: { name: 'test key', scopes } });
    if (res.statusCode !== 201) throw new Error(`api key failed: ${res.statusCode} ${res.body}`);
    const { key, id } = res.json();
    return { key, id, headers: { 'x-api-key': key } };
  }

  /**
   * A connection of the test's own to its schema, outside the app's pool (PostgreSQL only: TEST_DATABASE_URL), for
   * holding locks and transactions open while requests run. The caller ends it.
   */
  async pgClient(): Promise<pg.Client> {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('pgClient needs TEST_DATABASE_URL');
    const client = new pg.Client({ connectionString: url, options: `-c search_path=${this.database.searchPath}` });
    await client.connect();
    return client;
  }

  async close(): Promise<void> {
    for (const other of this.extra) await other.app.close();
    await this.main.app.close();
    await this.db.drop();
  }
}

export async function testApp(options: TestOptions = {}): Promise<TestApp> {
  const db = await testDatabase();
  const namespace = `test${randomUUID().slice(0, 8)}`;
  const config = testConfig(options.env);
  options.configure?.(config);
  const main = await buildApp(config, { database: db.database, namespace, clock: options.clock });
  return new TestApp(main, db, namespace);
}
