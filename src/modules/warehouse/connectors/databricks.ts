import type { Statement, TableRef } from '../types.js';
import { failure, lazyModule, openTimeoutMessage, refusal, WarehouseError, withTimeout, type Driver, type FailureCode, type StatementResult, type WarehouseSession } from './types.js';

/** The part of @databricks/sql this connector uses (the package is optional and not a build dependency). */
interface DatabricksOperation {
  fetchAll(): Promise<unknown[]>;
  cancel(): Promise<unknown>;
  close(): Promise<unknown>;
}
interface DatabricksSession {
  executeStatement(text: string, options: { namedParameters: Record<string, unknown>; queryTimeout: number }): Promise<DatabricksOperation>;
}
interface DatabricksClient {
  connect(options: { host: string; path: string; token: string }): Promise<unknown>;
  openSession(options: { configuration: Record<string, string> }): Promise<DatabricksSession>;
  close(): Promise<unknown>;
}
interface DatabricksModule {
  DBSQLClient: new () => DatabricksClient;
}

// A variable specifier keeps the optional package out of type checking; it is resolved at run time only
// (`npm install @databricks/sql` makes the connector available).
const PACKAGE = '@databricks/sql';
const databricks = lazyModule(async () => {
  const loaded = (await import(PACKAGE)) as { default?: DatabricksModule } & DatabricksModule;
  return loaded.default ?? loaded;
});

/** The driver's errors for a token the workspace refused (HTTP 401 or 403 on sign-in). */
function recognise(error: unknown): FailureCode | undefined {
  const { name, statusCode } = error as { name?: unknown; statusCode?: unknown };
  return name === 'AuthenticationError' || statusCode === 401 || statusCode === 403 ? 'authentication_failed' : undefined;
}

export const databricksDriver: Driver = {
  type: 'databricks',
  billsByBytes: false,
  keyPair: false,
  settings: {
    host: { kind: 'host', required: true, maxLength: 255, endpoint: true },
    http_path: { kind: 'string', required: true, maxLength: 512, endpoint: true },
  },
  credentials: { token: { kind: 'string', required: true, maxLength: 4096 } },
  host: (settings) => String(settings.host),
  load: async () => (await databricks()) !== undefined,
  async open(settings, credentials, options): Promise<WarehouseSession> {
    const api = await databricks();
    if (!api) throw new WarehouseError('connector_unavailable', 'The Databricks driver is not installed');
    const client = new api.DBSQLClient();
    let session: DatabricksSession | undefined;
    let signedIn = false;
    let running: { cancel(): Promise<unknown> } | undefined;
    async function query(text: string, named: Record<string, string | number | boolean | Date>, timeoutSeconds: number) {
      const open = session!;
      try {
        // Submitting the statement is bounded as well as fetching it: a warehouse that stops answering would
        // otherwise hold the submission for ever.
        return await withTimeout(
          timeoutSeconds,
          (async () => {
            const operation = await open.executeStatement(text, { namedParameters: named, queryTimeout: timeoutSeconds });
            running = operation;
            const rows = await operation.fetchAll();
            await operation.close();
            return rows as Record<string, unknown>[];
          })(),
          () => running?.cancel(),
        );
      } catch (error) {
        throw failure('query_failed', error, recognise);
      } finally {
        running = undefined;
      }
    }
    try {
      // One bound for signing in, opening the session and the administrative check: connect alone was bounded, and
      // a workspace that accepted the token and then stalled held the caller for ever.
      await withTimeout(
        options.connectTimeoutSeconds,
        (async () => {
          await client.connect({ host: String(settings.host), path: String(settings.http_path), token: credentials.token });
          session = await client.openSession({ configuration: { TIMEZONE: 'UTC' } });
          signedIn = true;
          // Workspace administrators belong to the built-in `admins` group.
          const [row] = await query("SELECT is_member('admins') AS is_admin", {}, options.connectTimeoutSeconds);
          if (row?.is_admin === true) {
            throw new WarehouseError('admin_role_refused', 'The token belongs to a workspace administrator; use a service principal with read access');
          }
        })(),
        () => client.close(),
        openTimeoutMessage(options.connectTimeoutSeconds),
      );
    } catch (error) {
      await client.close().catch(() => undefined);
      if (!signedIn && error instanceof WarehouseError && error.code === 'query_timeout') throw refusal('timeout');
      throw failure('connection_failed', error, recognise);
    }
    return {
      async ping(timeoutSeconds) {
        await query('SELECT 1', {}, timeoutSeconds);
      },
      async columns(table: TableRef, timeoutSeconds) {
        const [catalog, schema, name] = table;
        const rows = await query(
          'SELECT column_name, data_type FROM system.information_schema.columns WHERE table_catalog = :catalog AND table_schema = :schema AND table_name = :name',
          { catalog, schema, name },
          timeoutSeconds,
        );
        return rows.length ? new Map(rows.map((r) => [String(r.column_name), String(r.data_type)])) : undefined;
      },
      async run(statement: Statement, limits): Promise<StatementResult> {
        const started = performance.now();
        const named = Object.fromEntries(statement.params.map((p, i) => [`p${i + 1}`, p.value]));
        const rows = await query(statement.text, named, limits.timeoutSeconds);
        return { rows, elapsedMs: Math.round(performance.now() - started) };
      },
      cancel: async () => {
        await running?.cancel();
      },
      close: () => client.close().then(() => undefined),
    };
  },
};
