import { resolve, sep } from 'node:path';
import type { DuckDBConnection, DuckDBInstance, DuckDBValue } from '@duckdb/node-api';
import type { BoundParam, Statement, TableRef } from '../types.js';
import { INFORMATION_SCHEMA_COLUMNS, lazyModule, WarehouseError, withTimeout, type Driver, type WarehouseErrorCode, type StatementResult, type WarehouseSession } from './types.js';

const duckdb = lazyModule(() => import('@duckdb/node-api'));

/**
 * A database file inside WAREHOUSE_DUCKDB_DIR (issue 16): the path is relative to it, and anything that resolves
 * outside it (`..`, an absolute path elsewhere) is refused, so a connection cannot open arbitrary files.
 */
export function duckdbFile(dir: string, path: string): string | undefined {
  const root = resolve(dir);
  const file = resolve(root, path);
  return file.startsWith(root + sep) ? file : undefined;
}

/**
 * Open files, shared by the sessions of this process (DuckDB allows one instance per file and process) and closed
 * when the last session ends, so the file's own writers are not locked out between runs.
 */
const openFiles = new Map<string, { instance: Promise<DuckDBInstance>; sessions: number }>();

type DuckDBApi = NonNullable<Awaited<ReturnType<typeof duckdb>>>;

/**
 * Opens a file read only (an analysis never writes to the customer's data) and shut in: external access off, so
 * nothing in the file (a view over read_text('/etc/passwd'), read_csv of a URL, an ATTACH) reaches the host's files or
 * the network, no extension is installed or loaded, and the configuration locked once the session time zone is UTC,
 * so no statement can turn any of it back on.
 */
async function openLocked(api: DuckDBApi, file: string): Promise<DuckDBInstance> {
  const instance = await api.DuckDBInstance.create(file, {
    access_mode: 'READ_ONLY',
    enable_external_access: 'false',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    allow_community_extensions: 'false',
  });
  try {
    const setup = await instance.connect();
    try {
      // The time zone is set for every session here: once locked, a session can no longer set it.
      await setup.run("SET GLOBAL TimeZone = 'UTC'");
      await setup.run('SET GLOBAL lock_configuration = true');
    } finally {
      setup.closeSync();
    }
  } catch (error) {
    instance.closeSync();
    throw error;
  }
  return instance;
}

function acquire(api: DuckDBApi, file: string): Promise<DuckDBInstance> {
  let entry = openFiles.get(file);
  if (!entry) {
    entry = { instance: openLocked(api, file), sessions: 0 };
    openFiles.set(file, entry);
    entry.instance.catch(() => openFiles.delete(file));
  }
  entry.sessions += 1;
  return entry.instance;
}

async function release(file: string): Promise<void> {
  const entry = openFiles.get(file);
  if (!entry) return;
  entry.sessions -= 1;
  if (entry.sessions > 0) return;
  openFiles.delete(file);
  (await entry.instance).closeSync();
}

/**
 * DuckDB's messages name the file by its absolute path (`Cannot open database "/srv/uplift/warehouse/shop.duckdb"`)
 * and, for a lock held elsewhere, the program and process id holding it: server internals the caller has no use
 * for. The file is named as the connection gives it, the directory by its setting, and the lock holder is dropped.
 */
export function publicDuckdbMessage(message: string, dir: string, file: string, shown: string): string {
  const root = resolve(dir);
  return message
    .replaceAll(file, shown)
    .replaceAll(root + sep, '')
    .replaceAll(root, 'WAREHOUSE_DUCKDB_DIR')
    .replace(/Conflicting lock is held in .*?\(PID \d+\)( by user [^.\s]+)?\.?/, 'Another process holds a lock on it.');
}

function bindValue(param: BoundParam): DuckDBValue {
  return param.value instanceof Date ? param.value.toISOString() : param.value;
}

/** DuckDB hands back BIGINT as bigint and timestamps as value objects; the JSON form is numbers and text. */
function plainRows(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map((row) =>
    Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v === null ? null : typeof v === 'object' ? String(v) : v])),
  );
}

export const duckdbDriver: Driver = {
  type: 'duckdb',
  billsByBytes: false,
  keyPair: false,
  settings: { path: { kind: 'string', required: true, maxLength: 1024, endpoint: true } },
  credentials: {},
  load: async () => (await duckdb()) !== undefined,
  async open(settings, _credentials, options): Promise<WarehouseSession> {
    const api = await duckdb();
    if (!api) throw new WarehouseError('connector_unavailable', 'The DuckDB driver is not installed');
    const shown = String(settings.path);
    const file = duckdbFile(options.duckdbDir, shown);
    if (!file) throw new WarehouseError('connection_failed', 'The database file is outside the DuckDB directory');
    // DuckDB runs in this process on a local file with external access off: its messages are the engine's own, not
    // a remote's, and say what is wrong with the file or the table, so they are kept (without server paths).
    const fail = (code: WarehouseErrorCode, error: unknown, fallback: string) => {
      if (error instanceof WarehouseError) return error;
      const message = error instanceof Error && error.message ? error.message.slice(0, 500) : fallback;
      return new WarehouseError(code, publicDuckdbMessage(message, options.duckdbDir, file, shown));
    };
    let connection: DuckDBConnection;
    try {
      connection = await (await acquire(api, file)).connect();
    } catch (error) {
      await release(file).catch(() => undefined);
      throw fail('connection_failed', error, 'Could not open the DuckDB database file');
    }
    const conn = connection;
    async function query(text: string, values: DuckDBValue[], timeoutSeconds: number) {
      try {
        const reader = await withTimeout(timeoutSeconds, conn.runAndReadAll(text, values), () => conn.interrupt());
        return plainRows(reader.getRowObjects());
      } catch (error) {
        throw fail('query_failed', error, 'DuckDB refused the statement');
      }
    }
    return {
      async ping(timeoutSeconds) {
        await query('SELECT 1', [], timeoutSeconds);
      },
      async columns(table: TableRef, timeoutSeconds) {
        const [schema, name] = table;
        const rows = await query(
          INFORMATION_SCHEMA_COLUMNS,
          [schema, name],
          timeoutSeconds,
        );
        if (rows.length === 0) return undefined;
        return new Map(rows.map((r) => [String(r.column_name), String(r.data_type)]));
      },
      async run(statement: Statement, limits): Promise<StatementResult> {
        const started = performance.now();
        const rows = await query(statement.text, statement.params.map(bindValue), limits.timeoutSeconds);
        return { rows, elapsedMs: Math.round(performance.now() - started) };
      },
      cancel: async () => conn.interrupt(),
      close: async () => {
        conn.closeSync();
        await release(file);
      },
    };
  },
};
