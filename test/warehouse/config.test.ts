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
      allowedHosts: undefined,
      blockPrivateNetworks: false,
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

  it('reads the outbound policy, and refuses to start on an entry that is no host, address or CIDR', () => {
    const config = loadConfig({ WAREHOUSE_ALLOWED_HOSTS: ' DW.Example.com., *.snowflakecomputing.com, 10.0.0.0/8, 192.168.1.5, fd00::/8 ', WAREHOUSE_BLOCK_PRIVATE_NETWORKS: 'yes' });
    expect(config.warehouse).toMatchObject({
      allowedHosts: ['dw.example.com', '*.snowflakecomputing.com', '10.0.0.0/8', '192.168.1.5', 'fd00::/8'],
      blockPrivateNetworks: true,
    });
    expect(loadConfig({ WAREHOUSE_ALLOWED_HOSTS: ' , ' }).warehouse.allowedHosts).toBeUndefined();
    for (const bad of ['http://dw.example.com', '10.0.0.0/33', 'user:pw@dw', 'dw.example.com:5432', '10.0.0.0/8/1', '*']) {
      expect(() => loadConfig({ WAREHOUSE_ALLOWED_HOSTS: `ok.example.com,${bad}` }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ WAREHOUSE_ALLOWED_HOSTS: `ok.example.com,${bad}` })).toThrow('WAREHOUSE_ALLOWED_HOSTS entry 2 is not a host name, *.domain, IP address or CIDR');
    }
    expect(() => loadConfig({ WAREHOUSE_BLOCK_PRIVATE_NETWORKS: 'maybe' })).toThrow(/WAREHOUSE_BLOCK_PRIVATE_NETWORKS/);
  });
});
