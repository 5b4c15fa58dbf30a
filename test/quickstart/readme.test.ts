import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the start script, without types.
import { needsBuild } from '../../scripts/build-stamp.mjs';

/**
 * The README's quick start, run as a user runs it: `npm start` (a real process, built as npm start builds it, with
 * the background jobs on and a fresh data directory), then the README's shell blocks in one bash session (variables
 * carry from step to step) with curl and jq, each step's output compared with the answer the README shows under it.
 * Between assigning the users and tracking their purchases the periodic results rollup runs (it caches a payload
 * with the users and no purchase yet, as it did in the run of issue 31): step 7 must show the purchases all the same.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const section = /<!-- quickstart:start -->([\s\S]*?)<!-- quickstart:end -->/.exec(readme)?.[1] ?? '';

interface Step { title: string; script: string; answer: string; kind: string }

function steps(): Step[] {
  const found: Step[] = [];
  const re = /^#### (.+)\n[\s\S]*?```sh\n([\s\S]*?)```\n[\s\S]*?```(json|text)\n([\s\S]*?)```/gm;
  for (const m of section.matchAll(re)) found.push({ title: m[1], script: m[2], kind: m[3], answer: m[4].trim() });
  return found;
}

/** The start command's settings (`NAME=value ... npm start`), as the README gives them. */
function startSettings(): Record<string, string> {
  const line = /^((?:[A-Z_]+=\S+ )+)npm start$/m.exec(section)?.[1] ?? '';
  return Object.fromEntries([...line.matchAll(/([A-Z_]+)=('([^']*)'|\S+)/g)].map((m) => [m[1], m[3] ?? m[2]]));
}

function runBash(script: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', script], { cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

describe('README quick start', () => {
  let server: ChildProcess;
  let output = '';
  let exited = false;
  let builtBefore = false;
  let base: string;
  const work = mkdtempSync(join(tmpdir(), 'uplift-quickstart-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'uplift-quickstart-data-'));

  beforeAll(async () => {
    const settings = startSettings();
    expect(settings.FIRST_SUPERUSER_EMAIL).toBeTruthy();
    const port = await freePort();
    base = `127.0.0.1:${port}`;
    // As the README starts it, on a free port and a fresh data directory; the rollup every second (a setting the
    // README documents), so that it runs between the steps as it does at a person's pace.
    const env: NodeJS.ProcessEnv = { ...process.env, ...settings, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, SCHEDULER_TICK_SECONDS: '1', RESULTS_ROLLUP_INTERVAL_SECONDS: '1' };
    for (const name of ['ENVIRONMENT', 'SCHEDULER_ENABLED', 'DATABASE_URL', 'REDIS_URL', 'SECRET_KEY', 'LOG_LEVEL', 'NODE_ENV', 'VITEST', 'VITEST_POOL_ID', 'VITEST_WORKER_ID']) delete env[name];
    // After `npm ci` (whose prepare builds), as in CI, the build is current and `npm start` must not build again.
    builtBefore = !(needsBuild(root) as boolean);
    server = spawn('npm', ['start'], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (d: Buffer) => (output += d));
    server.stderr!.on('data', (d: Buffer) => (output += d));
    server.on('exit', () => (exited = true));
    // Polls /health; between attempts it waits for the server's next line of output (no sleep).
    for (;;) {
      if (exited) throw new Error(`npm start exited:\n${output}`);
      const up = await fetch(`http://${base}/health`).then((r) => r.ok, () => false);
      if (up) break;
      await new Promise((resolve) => {
        server.stdout!.once('data', resolve);
        server.stderr!.once('data', resolve);
        server.once('exit', resolve);
      });
    }
  }, 240_000);

  afterAll(async () => {
    if (server?.pid !== undefined && !exited) {
      const gone = new Promise((resolve) => server.once('exit', resolve));
      process.kill(-server.pid, 'SIGTERM');
      await gone;
    }
    rmSync(work, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('has steps, each with a shell block and the answer it prints', () => {
    expect(steps().length).toBeGreaterThanOrEqual(6);
  });

  it('every step prints the answer the README shows, with the periodic rollup run before the purchases', async () => {
    const all = steps();
    const assignStep = all.findIndex((s) => /assign/i.test(s.title));
    const trackStep = all.findIndex((s) => /track/i.test(s.title));
    expect(assignStep).toBeGreaterThan(0);
    expect(trackStep).toBeGreaterThan(assignStep);
    // After the users are assigned: waits (polling every 0.2 s, as a user would, not flat out on a shared machine)
    // until the results-rollup job has run since then.
    const rollupRan = [
      'SINCE=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)',
      `until curl -s localhost:8000/api/v1/scheduler/health/results-rollup -H "authorization: Bearer $TOKEN" \\`,
      `  | jq -e --arg since "$SINCE" '.last_run.finished_at > $since and .last_run.outcome == "ok"' > /dev/null; do sleep 0.2; done`,
    ].join('\n');
    const script = all
      .map((s, i) => `echo "@@step ${i}@@"\n${s.script}${i === assignStep ? `\n${rollupRan}\n` : ''}`.replaceAll('localhost:8000', base))
      .join('\n');
    const { code, stdout, stderr } = await runBash(`set -e\n${script}`, work);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const outputs = stdout.split(/^@@step \d+@@\n/m).slice(1);
    expect(outputs).toHaveLength(all.length);
    all.forEach((step, i) => {
      const printed = outputs[i].trim();
      if (step.kind === 'json') {
        const lines = printed.split('\n').filter(Boolean);
        const wanted = step.answer.split('\n').filter(Boolean);
        expect({ step: step.title, answer: lines.map((l) => JSON.parse(l)) }).toEqual({ step: step.title, answer: wanted.map((l) => JSON.parse(l)) });
      } else {
        expect({ step: step.title, answer: printed }).toEqual({ step: step.title, answer: step.answer });
      }
    });
    // The server built only if a source had changed since the last build, and printed no warning of the AWS SDK.
    expect({ rebuilt: output.includes('Sources changed since the last build') }).toEqual({ rebuilt: !builtBefore });
    expect(output).not.toMatch(/NodeVersionSupportWarning/);
  }, 120_000);
});
