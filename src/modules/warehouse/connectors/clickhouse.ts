import type { BoundParam, Statement, TableRef } from '../types.js';
import { failure, lazyModule, WarehouseError, type Driver, type StatementResult, type WarehouseSession } from './types.js';

const clickhouse = lazyModule(() => import('@clickhouse/client'));

/** ClickHouse reads DateTime64 parameters as `YYYY-MM-DD hh:mm:ss.sss` (UTC here: the parameter type says so). */
function bindValue(param: BoundParam): unknown {
  return param.value instanceof Date ? param.value.toISOString().replace('T', ' ').replace('Z', '') : param.value;
}

export const clickhouseDriver: Driver = {
  type: 'clickhouse',
  billsByBytes: false,
  keyPair: false,
  settings: {
    url: { kind: 'string', required: true, maxLength: 2048, endpoint: true },
    database: { kind: 'string', maxLength: 128, endpoint: true },
  },
  credentials: {
    username: { kind: 'string', required: true, maxLength: 128 },
    password: { kind: 'string', required: true, maxLength: 1024 },
  },
  load: async () => (await clickhouse()) !== undefined,
  async open(settings, credentials, options): Promise<WarehouseSession> {
    const api = await clickhouse();
    if (!api) throw new WarehouseError('connector_unavailable', 'The ClickHouse driver is not installed');
    const client = api.createClient({
      url: String(settings.url),
      username: credentials.username,
      password: credentials.password,
      database: typeof settings.database === 'string' ? settings.database : undefined,
      request_timeout: options.connectTimeoutSeconds * 1000,
      clickhouse_settings: { session_timezone: 'UTC', readonly: '1' },
      // The client logs failed requests with the server's text to stderr by default; the connector reports them
      // itself, with secret credential values cut out, so its own log is off.
      log: { level: api.ClickHouseLogLevel.OFF },
    });
    let inFlight: AbortController | undefined;
    async function query(text: string, params: Record<string, unknown>, timeoutSeconds: number, code: 'query_failed' | 'connection_failed' = 'query_failed') {
      inFlight = new AbortController();
      try {
        const result = await client.query({
          query: text,
          query_params: params,
          format: 'JSONEachRow',
          abort_signal: inFlight.signal,
          // The server stops the query at max_execution_time (timeout_overflow_mode throw).
          clickhouse_settings: { max_execution_time: timeoutSeconds },
        });
        return (await result.json()) as Record<string, unknown>[];
      } catch (error) {
        if (/TIMEOUT_EXCEEDED|Timeout exceeded/i.test(String((error as Error).message))) {
          throw new WarehouseError('query_timeout', `The statement ran longer than ${timeoutSeconds} seconds and was stopped`);
        }
        throw failure(code, error, 'ClickHouse refused the statement');
      } finally {
        inFlight = undefined;
      }
    }
    try {
      const [who] = await query('SELECT currentUser() AS user', {}, options.connectTimeoutSeconds, 'connection_failed');
      // `default` is ClickHouse's built-in administrative user (access management, every grant).
      if (who?.user === 'default') {
        throw new WarehouseError('admin_role_refused', 'The connection signs in as the built-in default user; use a read-only user');
      }
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    return {
      async ping(timeoutSeconds) {
        await query('SELECT 1', {}, timeoutSeconds);
      },
      async columns(table: TableRef, timeoutSeconds) {
        const [database, name] = table;
        const rows = await query(
          'SELECT name, type FROM system.columns WHERE database = {database:String} AND table = {name:String}',
          { database, name },
          timeoutSeconds,
        );
        return rows.length ? new Map(rows.map((r) => [String(r.name), String(r.type)])) : undefined;
      },
      async run(statement: Statement, limits): Promise<StatementResult> {
        const started = performance.now();
        const params = Object.fromEntries(statement.params.map((p, i) => [`p${i + 1}`, bindValue(p)]));
        const rows = await query(statement.text, params, limits.timeoutSeconds);
        return { rows, elapsedMs: Math.round(performance.now() - started) };
      },
      cancel: async () => inFlight?.abort(),
      close: () => client.close(),
    };
  },
};
