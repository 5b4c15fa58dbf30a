import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { BoundParam, Statement, TableRef } from '../types.js';
import { failure, lazyModule, networkFailure, refusal, WarehouseError, type Driver, type FailureCode, type StatementResult, type WarehouseSession } from './types.js';

const clickhouse = lazyModule(() => import('@clickhouse/client'));

/** ClickHouse reads DateTime64 parameters as `YYYY-MM-DD hh:mm:ss.sss` (UTC here: the parameter type says so). */
function bindValue(param: BoundParam): unknown {
  return param.value instanceof Date ? param.value.toISOString().replace('T', ' ').replace('Z', '') : param.value;
}

/** ClickHouse's exception types for a sign-in it refused. */
const AUTHENTICATION_ERRORS = new Set(['AUTHENTICATION_FAILED', 'UNKNOWN_USER', 'WRONG_PASSWORD', 'REQUIRED_PASSWORD', 'IP_ADDRESS_NOT_ALLOWED']);

/**
 * A ClickHouse server's errors carry its exception type (the client parses `Code: N. DB::Exception: ... (TYPE)`);
 * any other answer (an HTML page, a body that is not JSON, another server's error text) is not ClickHouse's.
 */
function recognise(error: unknown): FailureCode | undefined {
  const { type, message, name } = error as { type?: unknown; message?: unknown; name?: unknown };
  if (typeof type === 'string') return AUTHENTICATION_ERRORS.has(type) ? 'authentication_failed' : undefined;
  if (message === 'Timeout error.') return 'timeout';
  if (name === 'AbortError' || networkFailure(error)) return undefined;
  return 'unexpected_response';
}

export const clickhouseDriver: Driver = {
  type: 'clickhouse',
  billsByBytes: false,
  keyPair: false,
  settings: {
    url: { kind: 'url', required: true, maxLength: 2048, endpoint: true },
    database: { kind: 'string', maxLength: 128, endpoint: true },
  },
  credentials: {
    username: { kind: 'string', required: true, maxLength: 128 },
    password: { kind: 'string', required: true, maxLength: 1024 },
  },
  host: (settings) => new URL(String(settings.url)).hostname,
  load: async () => (await clickhouse()) !== undefined,
  async open(settings, credentials, options): Promise<WarehouseSession> {
    const api = await clickhouse();
    if (!api) throw new WarehouseError('connector_unavailable', 'The ClickHouse driver is not installed');
    const url = new URL(String(settings.url));
    // The client's own agents resolve the host again; this one resolves it through the outbound guard's pinned lookup.
    const agent = new (url.protocol === 'https:' ? HttpsAgent : HttpAgent)({ keepAlive: true, lookup: options.lookup });
    const client = api.createClient({
      url: url.toString(),
      http_agent: agent,
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
        throw failure(code, error, recognise);
      } finally {
        inFlight = undefined;
      }
    }
    try {
      const [who] = await query('SELECT currentUser() AS user', {}, options.connectTimeoutSeconds, 'connection_failed');
      // Any HTTP server "answers" a query (the client reads an HTML page as no rows): ClickHouse names the user.
      if (typeof who?.user !== 'string') throw refusal('unexpected_response');
      // `default` is ClickHouse's built-in administrative user (access management, every grant).
      if (who?.user === 'default') {
        throw new WarehouseError('admin_role_refused', 'The connection signs in as the built-in default user; use a read-only user');
      }
    } catch (error) {
      await client.close().catch(() => undefined);
      agent.destroy();
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
      close: async () => {
        await client.close();
        agent.destroy();
      },
    };
  },
};
