import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, withDataDirSecret } from '../../src/config.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'uplift-key-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('signing key', () => {
  it('never signs with a published key: unset SECRET_KEY gives a random key per process', () => {
    const a = loadConfig({});
    const b = loadConfig({});
    expect(a.secretKey).not.toBe(b.secretKey);
    expect(a.secretKey.length).toBeGreaterThanOrEqual(32);
    expect(a.secretKey).not.toMatch(/dev|change-me/);
  });

  it('generates a key per data directory on first start, mode 0600, and reads it back after', () => {
    const dir = join(tempDir(), 'data');
    const first = withDataDirSecret({ DATA_DIR: dir });
    expect(first.keyFile).toBe(join(dir, 'secret_key'));
    const stored = readFileSync(join(dir, 'secret_key'), 'utf8');
    expect(first.env.SECRET_KEY).toBe(stored);
    expect(stored.length).toBeGreaterThanOrEqual(32);
    expect(statSync(join(dir, 'secret_key')).mode & 0o777).toBe(0o600);
    expect(withDataDirSecret({ DATA_DIR: dir }).env.SECRET_KEY).toBe(stored);
    expect(loadConfig(withDataDirSecret({ DATA_DIR: dir }).env).secretKey).toBe(stored);
    expect(withDataDirSecret({ DATA_DIR: tempDir() }).env.SECRET_KEY).not.toBe(stored);
  });

  it('leaves a given SECRET_KEY alone and writes nothing for a shared or production deployment', () => {
    const dir = tempDir();
    expect(withDataDirSecret({ DATA_DIR: dir, SECRET_KEY: 'given' }).env.SECRET_KEY).toBe('given');
    expect(withDataDirSecret({ DATA_DIR: dir, DATABASE_URL: 'postgres://db/x' }).keyFile).toBeUndefined();
    expect(withDataDirSecret({ DATA_DIR: dir, ENVIRONMENT: 'production' }).keyFile).toBeUndefined();
    expect(() => statSync(join(dir, 'secret_key'))).toThrow();
  });

  it('refuses to start a shared deployment (DATABASE_URL set) without SECRET_KEY', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/x' })).toThrow(/SECRET_KEY must be set when DATABASE_URL is set/);
    expect(loadConfig({ DATABASE_URL: 'postgres://db/x', SECRET_KEY: 'k'.repeat(32) }).secretKey).toBe('k'.repeat(32));
  });
});
