import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import type { ExtractTablesWithRelations, SQL } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import * as schema from './schema/index.js';
import { StartupError } from '../platform/startup.js';

export type Schema = typeof schema;
/** The application's database handle: the same Drizzle API over node-postgres or embedded PGlite. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Anything a store function can run a query on: the database or an open transaction. */
export type Executor = Db | Tx;

export interface Database {
  kind: 'postgres' | 'pglite';
  db: Db;
  /** Runs one or more SQL statements without parameters (migrations, test setup). */
  exec(sqlText: string): Promise<void>;
  /**
   * Runs `fn` on one dedicated connection, for session state such as advisory locks (migrations, scheduler leader).
   * Under PGlite there is only one connection.
   */
  session<T>(fn: (exec: SessionExec) => Promise<T>): Promise<T>;
  /** The connection string a LISTEN client can use; undefined for embedded PGlite. */
  connectionString: string | undefined;
  /** The schema search_path applied to every connection (tests isolate themselves this way). */
  searchPath: string | undefined;
  /** Connections of the PostgreSQL pool (metrics); absent for the embedded database. */
  poolStats?: () => { total: number; idle: number; waiting: number };
  /** The embedded database's data directory as a tar (a template for `pgliteTemplate`); absent on PostgreSQL. */
  dumpDataDir?: () => Promise<Blob>;
  close(): Promise<void>;
}

export type SessionExec = <R = Record<string, unknown>>(sqlText: string, params?: unknown[]) => Promise<R[]>;

export interface ConnectOptions {
  databaseUrl?: string;
  /** PGlite data directory; `memory://` keeps the database in memory (tests). */
  dataDir?: string;
  searchPath?: string;
  poolSize?: number;
  /** Cancels a statement running longer than this (milliseconds); 0 or unset = no limit. */
  statementTimeoutMs?: number;
  /** In-memory PGlite only: start from this data directory dump (`PGlite.dumpDataDir`) instead of an empty one. */
  pgliteTemplate?: Blob;
}

const drizzleOptions = { schema, casing: 'snake_case' as const };

export async function connectDatabase(options: ConnectOptions): Promise<Database> {
  if (options.databaseUrl) return connectPostgres(options.databaseUrl, options);
  return connectPglite(options.dataDir ?? './data', options.searchPath, options.statementTimeoutMs, options.pgliteTemplate);
}

function connectPostgres(url: string, options: ConnectOptions): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 20,
    statement_timeout: options.statementTimeoutMs || undefined,
    // A database that does not answer fails the request within seconds (503) rather than holding it open.
    connectionTimeoutMillis: 5_000,
    options: options.searchPath ? `-c search_path=${options.searchPath}` : undefined,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  guardCheckouts(pool);
  return {
    kind: 'postgres',
    db: drizzlePg(pool, drizzleOptions) as unknown as Db,
    exec: async (sqlText) => {
      await pool.query(sqlText);
    },
    session: async (fn) => {
      const client = await pool.connect();
      try {
        return await fn(async (text, params) => (await client.query(text, params)).rows);
      } finally {
        client.release();
      }
    },
    connectionString: url,
    searchPath: options.searchPath,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => pool.end(),
  };
}

/**
 * Drizzle's transactions check a client out with `pool.connect()` and hold it between statements, where nothing
 * listens to its `error` event, and they send BEGIN before their try/finally, so a BEGIN that fails never releases
 * the client. A connection lost then (a PostgreSQL restart) was an uncaught "Connection terminated unexpectedly" and a
 * client the pool counted as checked out for good, which kept `pool.end()` from ever resolving. So each client checked
 * out this way listens for its error and is given back at once, with the error, when it comes (the pool drops it);
 * the caller's own release afterwards does nothing. Statements still on it fail as before (not queryable).
 * `pool.query` (the callback form of `connect`) has its own listener and release and is left alone.
 */
function guardCheckouts(pool: pg.Pool): void {
  const connect = pool.connect.bind(pool) as (callback?: unknown) => Promise<pg.PoolClient> | void;
  const guarded = (client: pg.PoolClient): pg.PoolClient => {
    const giveBack = client.release.bind(client);
    let released = false;
    const release = (error?: Error | boolean) => {
      if (released) return;
      released = true;
      client.removeListener('error', release);
      giveBack(error);
    };
    client.on('error', release);
    client.release = release;
    return client;
  };
  pool.connect = ((callback?: unknown) =>
    callback ? connect(callback) : (connect() as Promise<pg.PoolClient>).then(guarded)) as typeof pool.connect;
}

async function connectPglite(
  dataDir: string,
  searchPath: string | undefined,
  statementTimeoutMs = 0,
  template?: Blob,
): Promise<Database> {
  const inMemory = dataDir.startsWith('memory://');
  const releaseLock = inMemory ? () => undefined : lockDataDir(dataDir);
  let client: PGlite;
  try {
    client = inMemory ? new PGlite(template ? { loadDataDir: template } : {}) : new PGlite(resolve(dataDir, 'pg'));
    await client.waitReady;
    if (searchPath) await client.exec(`CREATE SCHEMA IF NOT EXISTS ${searchPath}; SET search_path TO ${searchPath}`);
    if (statementTimeoutMs > 0) await client.exec(`SET statement_timeout = ${Math.trunc(statementTimeoutMs)}`);
  } catch (error) {
    releaseLock();
    throw error;
  }
  return {
    kind: 'pglite',
    db: drizzlePglite(client, drizzleOptions) as unknown as Db,
    exec: async (sqlText) => {
      await client.exec(sqlText);
    },
    session: (fn) =>
      fn(async <R,>(text: string, params?: unknown[]) =>
        params?.length ? (await client.query<R>(text, params)).rows : ((await client.exec(text)).at(-1)?.rows as R[]) ?? [],
      ),
    connectionString: undefined,
    searchPath,
    dumpDataDir: () => client.dumpDataDir('none'),
    close: async () => {
      try {
        await client.close();
      } finally {
        releaseLock();
      }
    },
  };
}

/**
 * PGlite is a single-process database: a second process opening the same directory would corrupt it.
 * A lock file holding our pid guards the directory; a lock left by a dead process is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const lockPath = join(dataDir, 'uplift.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(lockPath, 'utf8').trim());
      if (holder && holder !== process.pid && isAlive(holder)) {
        throw new StartupError(`DATA_DIR ${dataDir} is in use by another process (pid ${holder}): stop that process, or set DATA_DIR to another directory (or DATABASE_URL to share a PostgreSQL database).`);
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new StartupError(`DATA_DIR ${dataDir} is in use by another process: stop it, or set DATA_DIR to another directory.`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Rows of a raw SQL query, the same on node-postgres and PGlite (both answer `{ rows }`). */
export async function queryRows<T>(db: Executor, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}
