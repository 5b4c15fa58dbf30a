import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseBool } from '../../src/config.js';
import { connectDatabase } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { modulesFor, MODULES } from '../../src/modules/index.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      host: '0.0.0.0', port: 8000, deploymentProfile: 'full', dataDir: './data', authProvider: 'local',
      accessTokenExpireMinutes: 60, rateLimitEnabled: true, sdkRateLimitPerMinute: 6000, loginMaxAttempts: 10,
      loginLockoutMinutes: 15, syncRolesOnLogin: true, idpSelfSignupEnabled: false, cacheEnabled: false, secretKeyIsDefault: true,
    });
    expect(c.firstSuperuser).toBeUndefined();
    expect(loadConfig({ FIRST_SUPERUSER_EMAIL: 'a@b.c', FIRST_SUPERUSER_PASSWORD: 'x' }).firstSuperuser).toEqual({ email: 'a@b.c', password: 'x', username: 'admin' });
  });

  it('reads booleans in any case as true/false, 1/0, yes/no, on/off, t/f, y/n; anything else stops startup', () => {
    for (const word of ['TRUE', 'true', '1', 'Yes', 'on', 'T', 'y']) expect(parseBool({ X: word }, 'X', false)).toBe(true);
    for (const word of ['False', '0', 'no', 'OFF', 'f', 'N']) expect(parseBool({ X: word }, 'X', true)).toBe(false);
    expect(() => loadConfig({ IDP_SELF_SIGNUP_ENABLED: 'maybe' })).toThrow(ConfigError);
    expect(() => loadConfig({ RATE_LIMIT_ENABLED: 'sometimes' })).toThrow(/RATE_LIMIT_ENABLED/);
  });

  it('refuses bad values and a missing SECRET_KEY in production, never printing the value', () => {
    expect(() => loadConfig({ DEPLOYMENT_PROFILE: 'medium' })).toThrow(/DEPLOYMENT_PROFILE/);
    expect(() => loadConfig({ PORT: '99999' })).toThrow(/PORT/);
    expect(() => loadConfig({ ENVIRONMENT: 'production' })).toThrow(/SECRET_KEY/);
    expect(() => loadConfig({ ENVIRONMENT: 'production', SECRET_KEY: 'short-secret' })).toThrow(/SECRET_KEY/);
    try {
      loadConfig({ SDK_RATE_LIMIT_PER_MINUTE: 'secret-looking-value' });
    } catch (error) {
      expect((error as Error).message).not.toContain('secret-looking-value');
    }
  });
});

describe('deployment profiles', () => {
  it('core never registers full-only modules; each profile registers exactly its entries', () => {
    const core = modulesFor('core').map((m) => m.name);
    const fullOnly = MODULES.filter((m) => !m.profiles.includes('core')).map((m) => m.name);
    expect(fullOnly.length).toBeGreaterThan(0);
    for (const name of fullOnly) expect(core).not.toContain(name);
    expect(modulesFor('full')).toEqual(MODULES.filter((m) => m.profiles.includes('full')));
  });
});

describe('embedded storage', () => {
  it('guards the data directory against a second process, takes over a stale lock, and migrates once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'uplift-lock-'));
    try {
      const first = await connectDatabase({ dataDir: dir });
      expect(existsSync(join(dir, 'uplift.lock'))).toBe(true);
      // Another live process holds the lock: our parent process stands in for it.
      writeFileSync(join(dir, 'uplift.lock'), String(process.ppid));
      await expect(connectDatabase({ dataDir: dir })).rejects.toThrow(/in use/);
      writeFileSync(join(dir, 'uplift.lock'), String(process.pid));
      expect((await migrate(first)).length).toBeGreaterThan(0);
      expect(await migrate(first)).toEqual([]);
      await first.close();
      expect(existsSync(join(dir, 'uplift.lock'))).toBe(false);
      writeFileSync(join(dir, 'uplift.lock'), '999999999');
      const again = await connectDatabase({ dataDir: dir });
      expect(await migrate(again)).toEqual([]);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('the process', () => {
  it('starts on a fresh data directory, bootstraps the superuser, serves /health and stops cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'uplift-main-'));
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env, DATABASE_URL: '', REDIS_URL: '', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'warn',
        FIRST_SUPERUSER_EMAIL: 'root@example.com', FIRST_SUPERUSER_PASSWORD: 'R00t-password', BCRYPT_ROUNDS: '4',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    try {
      let health: Response | undefined;
      for (let i = 0; i < 150 && !health; i++) {
        health = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
        if (!health) await new Promise((r) => setTimeout(r, 200));
      }
      expect(health?.status, output).toBe(200);
      const login = await fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'root@example.com', password: 'R00t-password' }),
      });
      expect(login.status).toBe(200);
      expect(output).toContain('SECRET_KEY is not set');
      expect(existsSync(join(dir, 'secret_key'))).toBe(true);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(existsSync(join(dir, 'uplift.lock'))).toBe(false);
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
