import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { connectDatabase, queryRows } from '../../src/db/client.js';

/**
 * The ingestion promise: a tracking call answered 200 has its event committed. The server is killed with SIGKILL
 * (no drain, no shutdown hook) while calls are still arriving, and every acknowledged event must be found.
 */
it('keeps every acknowledged event when the server is killed (SIGKILL)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'uplift-kill-'));
  const pgUrl = process.env.TEST_DATABASE_URL;
  const schema = `k_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  if (pgUrl) await adminQuery(pgUrl, `CREATE SCHEMA ${schema}`);
  const databaseUrl = pgUrl ? `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}` : '';
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const base = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  try {
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, DATABASE_URL: databaseUrl, REDIS_URL: '',
        LOG_LEVEL: 'warn', RATE_LIMIT_ENABLED: 'false', BCRYPT_ROUNDS: '4', SECRET_KEY: 'durability-test-secret-key-0123456789abcdef',
        FIRST_SUPERUSER_EMAIL: 'kill@example.com', FIRST_SUPERUSER_PASSWORD: 'K1ll-password',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await waitForHealth(base);
    const token = (await post(base, '/api/v1/auth/login', { email: 'kill@example.com', password: 'K1ll-password' })).access_token;
    const key = (await post(base, '/api/v1/api-keys', { name: 'kill' }, { authorization: `Bearer ${token}` })).key as string;

    const acknowledged: string[] = [];
    const statuses = new Map<number, number>();
    let stop = false;
    // Resolved by the sender whose answer makes 300 acknowledged events; the deadline only bounds a broken server.
    let reached!: () => void;
    const threeHundred = new Promise<void>((resolve) => (reached = resolve));
    const sender = async (worker: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await fetch(`${base}/api/v1/tracking/track`, {
            method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key },
            body: JSON.stringify({ event_type: 'durable', user_id: `w${worker}-${i}` }),
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 200) {
            if (acknowledged.push(((await res.json()) as { id: string }).id) === 300) reached();
          } else await res.body?.cancel();
        } catch {
          return; // the server is gone
        }
      }
    };
    const workers = Array.from({ length: 16 }, (_, w) => sender(w));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([threeHundred, new Promise((resolve) => (timer = setTimeout(resolve, 60_000)))]);
    clearTimeout(timer);
    expect(acknowledged.length, `answers so far: ${JSON.stringify([...statuses])}`).toBeGreaterThanOrEqual(300);
    // Listen before killing: an exit that already happened would never be reported to a later listener.
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGKILL');
    stop = true;
    await Promise.all(workers);
    await exited;

    const database = await connectDatabase(pgUrl ? { databaseUrl: pgUrl, searchPath: schema } : { dataDir: dir });
    try {
      const ids = sql.param(acknowledged);
      const rows = await queryRows<{ n: number }>(database.db, sql`SELECT count(*)::int AS n FROM events WHERE id = ANY(${ids}::uuid[])`);
      expect(acknowledged.length).toBeGreaterThanOrEqual(300);
      expect(rows[0].n).toBe(acknowledged.length);
    } finally {
      await database.close();
    }
  } finally {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    if (pgUrl) await adminQuery(pgUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  }
}, 180_000);

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(text);
  await client.end();
}

async function waitForHealth(base: string): Promise<void> {
  // Under the full suite on two cores, compiling and booting a server can take a while.
  for (let i = 0; i < 600; i++) {
    const ok = await fetch(`${base}/health`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('server did not start');
}

async function post(base: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}
