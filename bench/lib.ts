import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import autocannon from 'autocannon';
import pg from 'pg';

/** Shared pieces of the benchmark scripts: a server on real Postgres in its own schema, autocannon runs, the report. */
export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface Server {
  base: string;
  /** The service's process id (for cpuSeconds). */
  pid: number;
  stop(): Promise<void>;
}

/**
 * CPU time (user + system, seconds) a process has used so far, from /proc (Linux; clock ticks of 1/100 s). On a
 * shared machine the CPU a route costs per request moves much less than its throughput, which follows the share of
 * the cores the process gets.
 */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  // After "pid (comm) ", utime and stime are the 12th and 13th fields.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Starts the built service (`npm run build` first) on a fresh schema of BENCH_DATABASE_URL, without rate limits.
 * BENCH_NODE_ARGS adds Node options to the service's process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 * BENCH_SCHEMA names the schema instead (`bench_` and a word), created if absent and kept at the end, so that a
 * benchmark whose loading is long can run again on its data (drop it by hand when done); BENCH_SERVER_DIR runs the
 * build of another checkout (its `dist/`), e.g. a worktree at the base commit, for before/after runs on the same data.
 */
export async function startServer(extraEnv: Record<string, string> = {}): Promise<Server> {
  const kept = process.env.BENCH_SCHEMA;
  if (kept !== undefined && !/^bench_\w+$/.test(kept)) throw new Error('BENCH_SCHEMA: bench_ and letters, digits or _');
  const schema = kept ?? `bench_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  await adminQuery(`CREATE SCHEMA ${kept ? 'IF NOT EXISTS ' : ''}${schema}`);
  const port = 30_000 + Math.floor(Math.random() * 10_000);
  const child: ChildProcess = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), 'dist/src/main.js'], {
    cwd: process.env.BENCH_SERVER_DIR,
    env: {
      ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_ENABLED: 'false', SCHEDULER_ENABLED: 'false',
      DATABASE_URL: `${BENCH_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      SECRET_KEY: randomUUID() + randomUUID(), FIRST_SUPERUSER_EMAIL: 'bench@example.com', FIRST_SUPERUSER_PASSWORD: 'Bench-passw0rd', BCRYPT_ROUNDS: '4', ...extraEnv,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitForHealth(base);
  return {
    base,
    pid: child.pid!,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      if (!kept) await adminQuery(`DROP SCHEMA ${schema} CASCADE`);
    },
  };
}

/** Waits until `${base}/health` answers 2xx (about a minute at most). */
export async function waitForHealth(base: string): Promise<void> {
  for (let i = 0; ; i++) {
    if (await fetch(`${base}/health`).then((r) => r.ok, () => false)) return;
    if (i > 300) throw new Error(`${base} did not start`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: BENCH_DATABASE_URL });
  await client.connect();
  await client.query(text);
  await client.end();
}

export async function api<T = Record<string, unknown>>(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** A superuser token, a DEVELOPER-equivalent key, for setting up benchmark data. */
export async function signIn(base: string): Promise<{ bearer: Record<string, string>; key: Record<string, string> }> {
  const { access_token } = await api<{ access_token: string }>(base, 'POST', '/api/v1/auth/login', { email: 'bench@example.com', password: 'Bench-passw0rd' });
  const bearer = { authorization: `Bearer ${access_token}` };
  const { key } = await api<{ key: string }>(base, 'POST', '/api/v1/api-keys', { name: 'bench', scopes: ['sdk:ruleset'] }, bearer);
  return { bearer, key: { 'x-api-key': key } };
}

export interface Measured {
  label: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** Requests answered in the measured run. */
  requests: number;
  /** The server's CPU time per request answered, in microseconds, when measured (cpuSeconds). */
  cpuUsPerRequest?: number;
}

/** A warm-up (JIT, connection pools; 3 s unless told) whose numbers are discarded, then the measured run. */
export async function measure(label: string, options: autocannon.Options, warmUpSeconds = 3): Promise<Measured> {
  if (warmUpSeconds > 0) await autocannon({ connections: 50, ...options, duration: warmUpSeconds });
  const result = await autocannon({ connections: 50, duration: 10, ...options });
  return {
    label,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    requests: result.requests.total,
  };
}

/** Replaces the section between `<!-- name:start -->` and `<!-- name:end -->` in docs/benchmarks.md (appends if absent). */
export function writeSection(name: string, markdown: string): void {
  const path = 'docs/benchmarks.md';
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const current = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const i = current.indexOf(start);
  const j = current.indexOf(end);
  const next = i >= 0 && j > i ? current.slice(0, i) + block + current.slice(j + end.length) : `${current.trimEnd()}\n\n${block}\n`;
  writeFileSync(path, next);
}

export function machine(): string {
  const cpu = cpus();
  return `${cpu.length} x ${cpu[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;
}

export function table(rows: Measured[], extra: (m: Measured) => string = () => ''): string {
  const lines = ['| Scenario | req/s | p50 ms | p99 ms | errors | non-2xx |' + (extra(rows[0]) ? ' note |' : ''), '|---|---|---|---|---|---|' + (extra(rows[0]) ? '---|' : '')];
  for (const m of rows) lines.push(`| ${m.label} | ${m.requestsPerSecond} | ${m.p50} | ${m.p99} | ${m.errors} | ${m.non2xx} |${extra(m) ? ` ${extra(m)} |` : ''}`);
  return lines.join('\n');
}
