import type { Statement, TableRef } from '../types.js';
import { failure, lazyModule, openTimeoutMessage, refusal, WarehouseError, withTimeout, type Driver, type FailureCode, type StatementResult, type WarehouseSession } from './types.js';

/** Snowflake's built-in administrative roles (spec rule 6). */
const SNOWFLAKE_ADMIN_ROLES = ['ACCOUNTADMIN', 'SECURITYADMIN', 'SYSADMIN', 'ORGADMIN', 'USERADMIN'];

/** The part of snowflake-sdk this connector uses (the package is optional and not a build dependency). */
interface SnowflakeStatement {
  cancel(callback: (error: Error | undefined) => void): void;
}
interface SnowflakeConnection {
  connect(callback: (error: Error | undefined) => void): void;
  execute(options: {
    sqlText: string;
    binds?: unknown[];
    complete: (error: Error | undefined, statement: SnowflakeStatement, rows: Record<string, unknown>[] | undefined) => void;
  }): SnowflakeStatement;
  destroy(callback: (error: Error | undefined) => void): void;
}
interface SnowflakeModule {
  createConnection(options: Record<string, unknown>): SnowflakeConnection;
  configure?(options: Record<string, unknown>): void;
}

// A variable specifier keeps the optional package out of type checking; it is resolved at run time only.
const PACKAGE = 'snowflake-sdk';
const snowflake = lazyModule(async () => {
  const loaded = (await import(PACKAGE)) as { default?: SnowflakeModule } & SnowflakeModule;
  return loaded.default ?? loaded;
});

/** Snowflake's error codes for a sign-in it refused: wrong user or key, or a JWT it does not accept. */
const AUTHENTICATION_ERRORS = new Set([390100, 390144, 394304]);

function recognise(error: unknown): FailureCode | undefined {
  return AUTHENTICATION_ERRORS.has(Number((error as { code?: unknown }).code)) ? 'authentication_failed' : undefined;
}

export const snowflakeDriver: Driver = {
  type: 'snowflake',
  billsByBytes: false,
  keyPair: true,
  settings: {
    // The account is where the key signs in, the role what it signs in as; warehouse, database and schema only
    // choose, inside that account and role, what a statement runs on.
    // The account identifier (org-account, or a locator with its region): the host is <account>.snowflakecomputing.com.
    account: { kind: 'host', required: true, maxLength: 255, endpoint: true },
    warehouse: { kind: 'string', required: true, maxLength: 255, endpoint: false },
    database: { kind: 'string', maxLength: 255, endpoint: false },
    schema: { kind: 'string', maxLength: 255, endpoint: false },
    role: { kind: 'string', maxLength: 255, endpoint: true },
  },
  credentials: {
    username: { kind: 'string', required: true, maxLength: 255 },
    private_key: { kind: 'string', maxLength: 8192 },
  },
  adminField: (settings) =>
    typeof settings.role === 'string' && SNOWFLAKE_ADMIN_ROLES.includes(settings.role.toUpperCase()) ? ['settings', 'role'] : undefined,
  host: (settings) => `${String(settings.account)}.snowflakecomputing.com`,
  load: async () => (await snowflake()) !== undefined,
  async open(settings, credentials, options): Promise<WarehouseSession> {
    const api = await snowflake();
    if (!api) throw new WarehouseError('connector_unavailable', 'The Snowflake driver is not installed');
    if (!credentials.private_key) {
      throw new WarehouseError('connection_failed', 'No private key yet: generate one with regenerate-key and register its public key in Snowflake');
    }
    const connection = api.createConnection({
      account: settings.account,
      username: credentials.username,
      authenticator: 'SNOWFLAKE_JWT',
      privateKey: credentials.private_key,
      warehouse: settings.warehouse,
      database: settings.database,
      schema: settings.schema,
      role: settings.role,
      timeout: options.connectTimeoutSeconds * 1000,
    });
    let running: SnowflakeStatement | undefined;
    let signedIn = false;
    const cancel = () => new Promise<void>((resolve) => (running ? running.cancel(() => resolve()) : resolve()));
    function query(sqlText: string, binds: unknown[], timeoutSeconds: number): Promise<Record<string, unknown>[]> {
      const work = new Promise<Record<string, unknown>[]>((resolve, reject) => {
        running = connection.execute({
          sqlText,
          binds,
          complete: (error, _statement, rows) => (error ? reject(failure('query_failed', error, recognise)) : resolve(rows ?? [])),
        });
      });
      return withTimeout(timeoutSeconds, work, cancel).finally(() => {
        running = undefined;
      });
    }
    try {
      // One bound for signing in and the role check together, so opening never takes longer than the caller's limit.
      await withTimeout(
        options.connectTimeoutSeconds,
        (async () => {
          await new Promise<void>((resolve, reject) => connection.connect((error) => (error ? reject(error) : resolve())));
          signedIn = true;
          const [row] = await query('SELECT CURRENT_ROLE() AS "role"', [], options.connectTimeoutSeconds);
          if (SNOWFLAKE_ADMIN_ROLES.includes(String(row?.role).toUpperCase())) {
            throw new WarehouseError('admin_role_refused', 'The connection uses a built-in administrative role; use a role with read access only');
          }
        })(),
        cancel,
        openTimeoutMessage(options.connectTimeoutSeconds),
      );
    } catch (error) {
      connection.destroy(() => undefined);
      if (!signedIn && error instanceof WarehouseError && error.code === 'query_timeout') throw refusal('timeout');
      throw failure('connection_failed', error, recognise);
    }
    return {
      async ping(timeoutSeconds) {
        await query('SELECT 1', [], timeoutSeconds);
      },
      async columns(table: TableRef, timeoutSeconds) {
        const [database, schema, name] = table;
        // database passed the identifier rules, so quoting it is safe; the other parts are bound.
        const rows = await query(
          `SELECT column_name, data_type FROM "${database}".information_schema.columns WHERE table_schema = ? AND table_name = ?`,
          [schema, name],
          timeoutSeconds,
        );
        return rows.length ? new Map(rows.map((r) => [String(r.COLUMN_NAME), String(r.DATA_TYPE)])) : undefined;
      },
      async run(statement: Statement, limits): Promise<StatementResult> {
        const started = performance.now();
        await query(`ALTER SESSION SET TIMEZONE = 'UTC', STATEMENT_TIMEOUT_IN_SECONDS = ${Math.ceil(limits.timeoutSeconds)}`, [], limits.timeoutSeconds);
        const binds = statement.params.map((p) => (p.value instanceof Date ? p.value.toISOString() : p.value));
        const rows = await query(statement.text, binds, limits.timeoutSeconds);
        return { rows: rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k.toLowerCase(), v]))), elapsedMs: Math.round(performance.now() - started) };
      },
      cancel,
      close: () => new Promise<void>((resolve) => connection.destroy(() => resolve())),
    };
  },
};
