import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const production = { ENVIRONMENT: 'production', SECRET_KEY: 'x'.repeat(40) };

describe('warehouse settings', () => {
  it('reads the credential keys newest first and the limits with their defaults', () => {
    const [a, b] = [randomBytes(32), randomBytes(32)];
    const config = loadConfig({ WAREHOUSE_CREDENTIALS_KEYS: `${a.toString('base64')}, ${b.toString('base64url')}`, DATA_DIR: '/srv/uplift' });
    expect(config.warehouse).toEqual({
      credentialsKeys: [a, b],
      maxQueryTimeoutSeconds: 1800,
      maxBytesPerQuery: 214_748_364_800,
      maxRunsPerDay: 200,
      maxConcurrentJobs: 4,
      maxConcurrentRuns: 2,
      duckdbDir: '/srv/uplift/warehouse',
      checkSeconds: 30,
    });
    expect(loadConfig({}).warehouse.credentialsKeys).toBeUndefined();
  });

  it('refuses a malformed key at startup in production, and treats it as unset in development', () => {
    const bad = { WAREHOUSE_CREDENTIALS_KEYS: `${randomBytes(32).toString('base64')},${randomBytes(16).toString('base64')}` };
    expect(() => loadConfig({ ...production, ...bad })).toThrow(ConfigError);
    expect(() => loadConfig({ ...production, ...bad })).toThrow(/WAREHOUSE_CREDENTIALS_KEYS/);
    expect(loadConfig(bad).warehouse.credentialsKeys).toBeUndefined();
    expect(() => loadConfig({ WAREHOUSE_MAX_CONCURRENT_RUNS: '0' })).toThrow(/WAREHOUSE_MAX_CONCURRENT_RUNS/);
  });
});
