import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { testApp } from '../helpers/test-app.js';

/**
 * Issue 31, start-up: each problem with a setting is one line on stderr naming the setting and what to do, with no
 * stack trace, and exit code 2; a port in use is found before the database is created.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'uplift-startup-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const base: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', ...env };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'SECRET_KEY', 'ENVIRONMENT']) if (!(name in env)) delete base[name];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env: base, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

function expectOneLine(stderr: string, pattern: RegExp) {
  const lines = stderr.split('\n').filter((l) => l.trim() !== '' && !/NodeVersionSupportWarning|AWS SDK|node >=22|a\.co\/|trace-warnings|^To continue|^More information|^versions published|^and security/.test(l));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('start-up problems are one line naming the setting', () => {
  it('a DATA_DIR that is a file', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, 'not a directory');
    const { code, stderr } = await start({ DATA_DIR: file });
    expect(code).toBe(2);
    expectOneLine(stderr, /^Uplift cannot start: DATA_DIR .*a-file is a file, not a directory: .*set DATA_DIR to a directory/);
  }, 60_000);

  it('a DATA_DIR that cannot be written', async () => {
    // Root writes through file modes: a directory of sysfs stands in for one this user may not write.
    let dir = '/sys/uplift-cannot-write';
    if (process.getuid?.() !== 0) {
      const locked = join(scratch, 'locked');
      mkdirSync(locked, { mode: 0o500 });
      dir = join(locked, 'data');
    }
    const { code, stderr } = await start({ DATA_DIR: dir });
    expect(code).toBe(2);
    expectOneLine(stderr, /^Uplift cannot start: DATA_DIR .* cannot be written \(E[A-Z]+\): give this user write access to it or set DATA_DIR/);
  }, 60_000);

  it('a port in use, before anything is created in DATA_DIR', async () => {
    const holder: Server = createServer();
    const port = await new Promise<number>((resolve) => holder.listen(0, '127.0.0.1', () => resolve((holder.address() as { port: number }).port)));
    const dir = join(scratch, 'never-created');
    try {
      const { code, stderr } = await start({ DATA_DIR: dir, PORT: String(port) });
      expect(code).toBe(2);
      expectOneLine(stderr, new RegExp(`^Uplift cannot start: PORT ${port} is already in use on 127\\.0\\.0\\.1: stop the process that holds it or set PORT to a free port`));
      expect(existsSync(dir)).toBe(false);
    } finally {
      holder.close();
    }
  }, 60_000);

  it('a data directory in use by another process', async () => {
    const dir = join(scratch, 'in-use');
    mkdirSync(dir);
    // This test's process stands in for another server holding the directory.
    writeFileSync(join(dir, 'uplift.lock'), String(process.pid));
    const { code, stderr } = await start({ DATA_DIR: dir });
    expect(code).toBe(2);
    expectOneLine(stderr, new RegExp(`^Uplift cannot start: DATA_DIR .*in-use is in use by another process \\(pid ${process.pid}\\): stop that process, or set DATA_DIR`));
  }, 60_000);
});

describe('one version', () => {
  it('/health and the OpenAPI document report the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const t = await testApp();
    try {
      expect((await t.inject({ method: 'GET', url: '/health' })).json().version).toBe(version);
      expect((await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json().info.version).toBe(version);
    } finally {
      await t.close();
    }
  }, 60_000);
});
