import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/main.js';
import { connectDatabase } from '../../src/db/client.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { experiment } from '../helpers/fixtures.js';

/** Runs the CLI in process; API commands reach the test app through inject instead of a socket, or a given fetch. */
async function cli(argv: string[], env: Record<string, string> = {}, t?: TestApp | typeof fetch) {
  let out = '';
  let err = '';
  const io: CliIo = {
    out: (text) => { out += text; },
    err: (text) => { err += text; },
    env: { ENVIRONMENT: 'test', BCRYPT_ROUNDS: '4', ...env },
    fetch: typeof t === 'function' ? t : t
      ? async (input, init) => {
          const url = new URL(String(input));
          const res = await t.inject({
            method: (init?.method ?? 'GET') as 'GET',
            url: url.pathname + url.search,
            headers: init?.headers as Record<string, string>,
            payload: init?.body as string | undefined,
          });
          return new Response(res.rawPayload, { status: res.statusCode, headers: res.headers as Record<string, string> });
        }
      : undefined,
  };
  const code = await runCli(argv, io);
  return { code, out, err };
}

describe('uplift CLI: database commands', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'uplift-cli-'));
    dirs.push(dir);
    return dir;
  };

  it('migrate applies every migration once, then reports the database up to date', async () => {
    const DATA_DIR = dataDir();
    const first = await cli(['migrate'], { DATA_DIR });
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/^Applied \d+ migration\(s\): 0001_foundation/);
    const second = await cli(['migrate'], { DATA_DIR });
    expect(second).toMatchObject({ code: 0, out: 'The database is up to date.\n' });
  });

  it('create-superuser creates a superuser who can sign in, and refuses a second one with the same email', async () => {
    const DATA_DIR = dataDir();
    const env = { DATA_DIR, UPLIFT_PASSWORD: 'Sup3r-secret' };
    const created = await cli(['create-superuser', '--email', 'ops@example.com', '--username', 'ops'], env);
    expect(created).toMatchObject({ code: 0, out: 'Created superuser ops@example.com\n' });
    const again = await cli(['create-superuser', '--email', 'ops@example.com'], env);
    expect(again.code).toBe(1);
    expect(again.err).toContain('already exists');
    const database = await connectDatabase({ dataDir: DATA_DIR });
    try {
      const [row] = await database.session((exec) => exec<{ is_superuser: boolean; role: string; username: string }>(
        "SELECT is_superuser, role, username FROM users WHERE email = 'ops@example.com'"));
      expect(row).toEqual({ is_superuser: true, role: 'ADMIN', username: 'ops' });
    } finally {
      await database.close();
    }
  });

  it('create-superuser with a new email and a username another account holds says the username is taken', async () => {
    const DATA_DIR = dataDir();
    const env = { DATA_DIR, UPLIFT_PASSWORD: 'Sup3r-secret' };
    expect((await cli(['create-superuser', '--email', 'first@example.com'], env)).code).toBe(0);
    // --username defaults to admin, which first@example.com now holds.
    const taken = await cli(['create-superuser', '--email', 'second@example.com'], env);
    expect(taken.code).toBe(1);
    expect(taken.err).toContain('username "admin"');
    expect(taken.err).toContain('--username');
    expect(taken.err).not.toContain('already exists');
    const other = await cli(['create-superuser', '--email', 'second@example.com', '--username', 'second'], env);
    expect(other).toMatchObject({ code: 0, out: 'Created superuser second@example.com\n' });
  });

  it('create-superuser needs a password that meets the rule, from UPLIFT_PASSWORD only', async () => {
    const missing = await cli(['create-superuser', '--email', 'a@example.com'], { DATA_DIR: dataDir() });
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('UPLIFT_PASSWORD');
    const weak = await cli(['create-superuser', '--email', 'a@example.com'], { DATA_DIR: dataDir(), UPLIFT_PASSWORD: 'short' });
    expect(weak.code).toBe(2);
    expect(weak.err).toContain('at least 8 characters');
  });

  // Migrating signs nothing: it must not need the key the server needs (DATABASE_URL, staging, production).
  it('migrate runs without SECRET_KEY where the server requires one; create-superuser still requires it', async () => {
    const production = await cli(['migrate'], { ENVIRONMENT: 'production', DATA_DIR: dataDir() });
    expect(production.err).toBe('');
    expect(production.code).toBe(0);
    expect(production.out).toMatch(/^Applied \d+ migration\(s\)/);

    const superuser = await cli(['create-superuser', '--email', 'a@example.com'], {
      DATABASE_URL: 'postgres://127.0.0.1:1/none', UPLIFT_PASSWORD: 'Sup3r-secret',
    });
    expect(superuser.code).toBe(2);
    expect(superuser.err).toContain('SECRET_KEY must be set when DATABASE_URL is set');
  });

  it.runIf(process.env.TEST_DATABASE_URL)('migrate runs on DATABASE_URL without SECRET_KEY', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    const schema = `cli_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const admin = new pg.Client({ connectionString: url.href });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA ${schema}`);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const res = await cli(['migrate'], { DATABASE_URL: url.href });
      expect(res.err).toBe('');
      expect(res.code).toBe(0);
      expect(res.out).toMatch(/^Applied \d+ migration\(s\): 0001_foundation/);
      const { rows } = await admin.query('SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2', [schema, 'users']);
      expect(rows[0].n).toBe(1);
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });

  it('a bad setting is a configuration error naming the setting', async () => {
    const res = await cli(['migrate'], { DEPLOYMENT_PROFILE: 'huge' });
    expect(res.code).toBe(2);
    expect(res.err).toContain('DEPLOYMENT_PROFILE');
  });

  it('--help lists every command; an unknown command or missing argument is a usage error', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const name of ['migrate', 'create-superuser', 'export', 'flags', 'experiments']) expect(help.out).toContain(name);
    expect((await cli(['launch'])).code).toBe(2);
    const missing = await cli(['flags', 'toggle']);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("missing required argument 'key'");
  });
});

describe('uplift CLI: API commands', () => {
  let t: TestApp;
  let admin: TestUser;
  beforeAll(async () => {
    t = await testApp();
    admin = await t.user({ role: 'ADMIN' });
  });
  afterAll(() => t.close());

  it('flags list and toggle work through the API with a token', async () => {
    const key = t.unique('cli_flag');
    const created = await t.inject({ method: 'POST', url: '/api/v1/feature-flags/', headers: admin.headers, payload: { key, name: 'CLI flag' } });
    expect(created.statusCode).toBe(201);
    const auth = ['--url', 'http://uplift.test', '--token', admin.token];
    const list = await cli(['flags', 'list', '--search', key, ...auth], {}, t);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(new RegExp(`^KEY +NAME +STATUS +ON +ROLLOUT\\n${key} +CLI flag +\\w+ +no `));
    const on = await cli(['flags', 'toggle', key, ...auth], {}, t);
    expect(on).toMatchObject({ code: 0, out: `${key} is now on\n` });
    const view = await t.inject({ method: 'GET', url: `/api/v1/feature-flags/${created.json().id}`, headers: admin.headers });
    expect(view.json().is_active).toBe(true);
    expect((await cli(['flags', 'toggle', key, '--off', ...auth], {}, t)).out).toBe(`${key} is now off\n`);
    const unknown = await cli(['flags', 'toggle', 'no-such-flag', ...auth], {}, t);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('No feature flag has the key');
  });

  it('signs in with --email and UPLIFT_PASSWORD; a wrong password shows the API message', async () => {
    const ok = await cli(['flags', 'list', '--url', 'http://uplift.test', '--email', admin.email], { UPLIFT_PASSWORD: 'Passw0rd!x' }, t);
    expect(ok.code).toBe(0);
    const bad = await cli(['flags', 'list', '--url', 'http://uplift.test', '--email', admin.email], { UPLIFT_PASSWORD: 'Wrong-pass1' }, t);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/^uplift: 401: /);
    const none = await cli(['flags', 'list', '--url', 'http://uplift.test'], {}, t);
    expect(none.code).toBe(2);
    expect(none.err).toContain('Not signed in');
  });

  it('experiments results prints the results payload of the experiment with that key', async () => {
    const exp = await experiment(t, admin);
    const res = await cli(['experiments', 'results', exp.key, '--url', 'http://uplift.test', '--token', admin.token], {}, t);
    expect(res.err).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.out)).toMatchObject({ experiment_id: exp.id });
  });

  it('export writes the CSV file to standard output', async () => {
    const exp = await experiment(t, admin);
    const res = await cli(['export', 'experiments', '--url', 'http://uplift.test', '--token', admin.token], {}, t);
    expect(res.code).toBe(0);
    expect(res.out.split('\n')[0]).toMatch(/^experiment_id,experiment_name,status,/);
    expect(res.out).toContain(exp.id);
    expect((await cli(['export', 'users', '--token', 'x'], {}, t)).code).toBe(2);
  });
});

describe('uplift CLI: what it prints is safe for a terminal', () => {
  /** What a terminal acts on instead of showing: C0 (but the line breaks the CLI writes), DEL, C1, separators, bidi. */
  const ACTS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
  const EVIL = '\u001b]0;owned\u0007\u001b[2J\u009b31m\r\nFAKE\u2028\u202e\u2066\u007f';
  const flag = { id: randomUUID(), key: `k${EVIL}`, name: `n${EVIL}`, status: `ACTIVE${EVIL}`, is_active: false, rollout_percentage: 5 };
  /** A server (hostile, or holding hostile data) that answers what the commands ask. */
  const server: typeof fetch = async (input) => {
    const url = new URL(String(input));
    const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    if (url.pathname === '/api/v1/feature-flags/') return json({ items: [flag] });
    if (url.pathname === '/api/v1/feature-flags/bulk-toggle') return json({ results: [{ success: false, error: `refused${EVIL}` }] });
    if (url.pathname === '/api/v1/experiments/') return json([{ id: 'e1', key: 'exp', name: 'x', status: 'RUNNING' }]);
    if (url.pathname === '/api/v1/results/e1') return json({ experiment_id: 'e1', note: `n${EVIL}` });
    if (url.pathname.startsWith('/api/v1/export/')) return new Response(`id,name\r\n1,"a${EVIL}"\r\n`, { status: 200 });
    return json({ detail: `nope${EVIL}` }, 404);
  };
  const auth = ['--url', 'http://uplift.test', '--token', 't'];

  it('flags list: every cell escaped, one line per flag', async () => {
    const res = await cli(['flags', 'list', ...auth], {}, server);
    expect(res.code).toBe(0);
    expect(res.out).not.toMatch(ACTS);
    expect(res.out.split('\n')).toHaveLength(3);
    expect(res.out).toContain('k\\u001b]0;owned\\u0007\\u001b[2J\\u009b31m\\u000d\\u000aFAKE\\u2028\\u202e\\u2066\\u007f');
  });

  it('messages and errors: values from the server and from the command line are escaped', async () => {
    const refused = await cli(['flags', 'toggle', flag.key, ...auth], {}, server);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^uplift: refused\\u001b/);
    const unknown = await cli(['flags', 'toggle', `other${EVIL}`, ...auth], {}, server);
    expect(unknown.err).toContain('No feature flag has the key');
    const api = await cli(['export', 'experiments', ...auth], {}, async () => new Response(JSON.stringify({ detail: `x${EVIL}` }), { status: 400 }));
    expect(api.err).toMatch(/^uplift: 400: x\\u001b/);
    for (const res of [refused, unknown, api]) {
      expect(res.err).not.toMatch(ACTS);
      expect(res.err.endsWith('\n')).toBe(true);
    }
    // The parser's usage text is a document: its lines (LF, CRLF) stay, anything else is escaped.
    const usage = await cli(['flags', `--bogus${EVIL}`]);
    expect(usage.code).toBe(2);
    expect(usage.err).toContain('--bogus\\u001b]0;owned\\u0007');
    expect(usage.err.replace(/\r?\n/g, '')).not.toMatch(ACTS);
  });

  it('documents keep their lines: results JSON still parses to the same value, an export keeps its rows', async () => {
    const results = await cli(['experiments', 'results', 'exp', ...auth], {}, server);
    expect(results.code).toBe(0);
    expect(results.out.replace(/\n/g, '')).not.toMatch(ACTS);
    expect(JSON.parse(results.out)).toEqual({ experiment_id: 'e1', note: `n${EVIL}` });
    const csv = await cli(['export', 'experiments', ...auth], {}, server);
    expect(csv.out.replace(/\r\n/g, '')).not.toMatch(ACTS);
    expect(csv.out.split('\r\n')).toHaveLength(4);
  });
});
