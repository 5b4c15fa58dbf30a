import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { connectDatabase } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';

describe('deployment settings', () => {
  it('database pool size and statement timeout have defaults and bounds', () => {
    const defaults = loadConfig({});
    expect(defaults.databasePoolSize).toBe(20);
    expect(defaults.databaseStatementTimeoutSeconds).toBe(60);
    expect(loadConfig({ DATABASE_POOL_SIZE: '5', DATABASE_STATEMENT_TIMEOUT_SECONDS: '0' })).toMatchObject({
      databasePoolSize: 5,
      databaseStatementTimeoutSeconds: 0,
    });
    expect(() => loadConfig({ DATABASE_POOL_SIZE: '0' })).toThrow(/DATABASE_POOL_SIZE/);
    expect(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_SECONDS: 'soon' })).toThrow(/DATABASE_STATEMENT_TIMEOUT_SECONDS/);
  });

  it('RESULTS_PARALLEL_QUERIES has a default and bounds', () => {
    expect(loadConfig({}).resultsParallelQueries).toBe(Math.min(8, Math.max(2, availableParallelism())));
    expect(loadConfig({ RESULTS_PARALLEL_QUERIES: '1' }).resultsParallelQueries).toBe(1);
    expect(() => loadConfig({ RESULTS_PARALLEL_QUERIES: '0' })).toThrow(/RESULTS_PARALLEL_QUERIES/);
    expect(() => loadConfig({ RESULTS_PARALLEL_QUERIES: 'many' })).toThrow(/RESULTS_PARALLEL_QUERIES/);
  });

  it('SMTP and Glue timeouts have defaults and bounds, in seconds', () => {
    const smtp = { SMTP_HOST: 'mail.example.com' };
    expect(loadConfig(smtp).platform.smtp).toMatchObject({ connectionTimeoutMs: 10_000, socketTimeoutMs: 30_000, sendTimeoutMs: 60_000 });
    expect(loadConfig({ ...smtp, SMTP_CONNECTION_TIMEOUT_SECONDS: '2', SMTP_SOCKET_TIMEOUT_SECONDS: '3', SMTP_SEND_TIMEOUT_SECONDS: '4' }).platform.smtp)
      .toMatchObject({ connectionTimeoutMs: 2_000, socketTimeoutMs: 3_000, sendTimeoutMs: 4_000 });
    expect(loadConfig({}).platform.etl).toMatchObject({ connectionTimeoutMs: 5_000, requestTimeoutMs: 30_000 });
    expect(loadConfig({ ETL_GLUE_CONNECTION_TIMEOUT_SECONDS: '1', ETL_GLUE_REQUEST_TIMEOUT_SECONDS: '600' }).platform.etl)
      .toMatchObject({ connectionTimeoutMs: 1_000, requestTimeoutMs: 600_000 });
    for (const name of ['SMTP_CONNECTION_TIMEOUT_SECONDS', 'SMTP_SOCKET_TIMEOUT_SECONDS', 'SMTP_SEND_TIMEOUT_SECONDS']) {
      expect(() => loadConfig({ ...smtp, [name]: '0' })).toThrow(new RegExp(name));
    }
    expect(() => loadConfig({ ETL_GLUE_REQUEST_TIMEOUT_SECONDS: 'never' })).toThrow(/ETL_GLUE_REQUEST_TIMEOUT_SECONDS/);
    expect(() => loadConfig({ ETL_GLUE_CONNECTION_TIMEOUT_SECONDS: '0' })).toThrow(/ETL_GLUE_CONNECTION_TIMEOUT_SECONDS/);
  });

  it('LOG_LEVEL takes one of pino\'s levels (any case); anything else stops startup naming the setting', () => {
    expect(loadConfig({}).logLevel).toBe('info');
    expect(loadConfig({ ENVIRONMENT: 'test' }).logLevel).toBe('silent');
    expect(loadConfig({ LOG_LEVEL: 'DEBUG' }).logLevel).toBe('debug');
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).toThrow(ConfigError);
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).toThrow(/LOG_LEVEL must be one of: fatal, error, warn, info, debug, trace, silent/);
  });

  it('tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT is an http(s) URL', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).tracing).toEqual({
      endpoint: 'http://127.0.0.1:4318',
      serviceName: 'uplift',
    });
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });

  it('the statement timeout applies to every statement, and migrations keep it', async () => {
    const url = process.env.TEST_DATABASE_URL;
    const database = await connectDatabase(url ? { databaseUrl: url, poolSize: 1, statementTimeoutMs: 1500 } : { dataDir: 'memory://', statementTimeoutMs: 1500 });
    try {
      const show = () => database.session((exec) => exec<{ statement_timeout: string }>('SHOW statement_timeout'));
      expect(await show()).toEqual([{ statement_timeout: '1500ms' }]);
      if (!url) {
        await migrate(database);
        expect(await show()).toEqual([{ statement_timeout: '1500ms' }]);
      }
    } finally {
      await database.close();
    }
  });
});

describe('a statement cancelled by the timeout', () => {
  it('answers 503 with Retry-After, not 500', async () => {
    const { default: Fastify } = await import('fastify');
    const { installErrorHandling, STATEMENT_TIMEOUT } = await import('../../src/platform/error-handler.js');
    const app = Fastify();
    installErrorHandling(app);
    app.get('/slow', async () => {
      throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    });
    const res = await app.inject({ method: 'GET', url: '/slow' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json()).toEqual({ detail: STATEMENT_TIMEOUT });
    await app.close();
  });
});
