import type { LookupFunction } from 'node:net';
import type { Statement, TableRef, WarehouseType } from '../types.js';

export type Row = Record<string, unknown>;

/**
 * Why a warehouse call failed: the run's error_code, or the connection test's. The full set is listed in
 * docs/api-notes.md (the spec leaves it open).
 */
export type WarehouseErrorCode =
  | 'connection_failed'
  | 'connection_refused'
  | 'timeout'
  | 'tls_failed'
  | 'authentication_failed'
  | 'unexpected_response'
  | 'host_not_found'
  | 'address_not_allowed'
  | 'admin_role_refused'
  | 'query_timeout'
  | 'query_failed'
  | 'bytes_limit_exceeded'
  | 'not_single_select'
  | 'connector_unavailable';

export class WarehouseError extends Error {
  constructor(
    readonly code: WarehouseErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface RunLimits {
  timeoutSeconds: number;
  /** Set where the warehouse bills by bytes: refused above it before running, and the job's billing cap. */
  maxBytes?: number;
}

export interface StatementResult {
  rows: Row[];
  elapsedMs: number;
  jobId?: string;
  bytesBilled?: number;
}

/**
 * An open session on one warehouse: I/O only. Opening signs in, sets the session time zone to UTC and refuses
 * built-in administrative roles (spec rule 6), so every caller (test, validate, runs) gets the same checks.
 */
export interface WarehouseSession {
  /** A statement that reads no table. */
  ping(timeoutSeconds: number): Promise<void>;
  /** Column name -> warehouse type of a table, or undefined when the table does not exist (metadata only). */
  columns(table: TableRef, timeoutSeconds: number): Promise<Map<string, string> | undefined>;
  run(statement: Statement, limits: RunLimits): Promise<StatementResult>;
  /** Stops the statement in flight, if any. */
  cancel(): Promise<void>;
  close(): Promise<void>;
}

export type Settings = Record<string, unknown>;
export type Credentials = Record<string, string>;

export interface OpenOptions {
  /**
   * Bound on opening the whole session: signing in and every setup statement after it (time zone, search path, the
   * administrative-role check). The connection test's 30 seconds, or the run's query timeout when shorter. A server
   * that accepts sign-in and then stalls must not hold the caller, its connection or a run slot for ever.
   */
  connectTimeoutSeconds: number;
  /** WAREHOUSE_DUCKDB_DIR, resolved: duckdb paths are relative to it. */
  duckdbDir: string;
  /**
   * For drivers with a `host`: the outbound guard's lookup, pinned to the addresses it checked. Every socket the
   * driver opens to that host resolves through it, so it connects where the guard looked.
   */
  lookup?: LookupFunction;
}

export interface FieldSpec {
  /** `host`: a host name or IP address; `url`: an http(s) URL without user:password@ (credentials go in credentials). */
  kind: 'string' | 'integer' | 'boolean' | 'host' | 'url';
  required?: boolean;
  maxLength?: number;
  min?: number;
  max?: number;
  /** Never shown in a response (credentials are never shown at all; this marks secret settings). */
  secret?: boolean;
}

/**
 * A connection setting. `endpoint` says whether it decides where or how the platform signs in (host, port, URL,
 * account, database, TLS, role): changing such a setting drops the stored credentials unless the same request sends
 * new ones, so an administrator cannot point saved credentials at a server of their choosing. Every setting must say,
 * so a setting added later cannot silently carry credentials to a new place.
 */
export interface SettingSpec extends FieldSpec {
  endpoint: boolean;
}

export interface Driver {
  type: WarehouseType;
  billsByBytes: boolean;
  /** The platform can generate the key pair (POST .../regenerate-key). */
  keyPair: boolean;
  settings: Record<string, SettingSpec>;
  credentials: Record<string, FieldSpec>;
  /**
   * Where the input itself names a built-in administrative role or user of the warehouse (spec rule 6): the field's
   * place, checked before anything is stored or sent. Signing in checks the role again (WarehouseSession).
   */
  adminField?(settings: Settings, credentials: Credentials): ['settings' | 'credentials', string] | undefined;
  /**
   * Creating or changing the connection signs in to check its role, because what makes a role administrative is an
   * attribute the warehouse keeps (a PostgreSQL superuser may have any name), not its name.
   */
  checksRoleOnSave?: boolean;
  /**
   * The host the driver's sockets connect to, from valid settings; the outbound guard checks it before `open`.
   * Absent for a driver that opens no socket to a host the connection names (DuckDB reads a local file).
   */
  host?(settings: Settings): string;
  /** Loads the driver package on first use; false when it is not installed or does not load. */
  load(): Promise<boolean>;
  open(settings: Settings, credentials: Credentials, options: OpenOptions): Promise<WarehouseSession>;
}

/**
 * Runs `work` and rejects with query_timeout after `seconds`, calling `onTimeout` (cancel the statement, or drop
 * the connection). `message` names what took too long (default: a statement).
 */
export async function withTimeout<T>(seconds: number, work: Promise<T>, onTimeout: () => unknown, message?: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void Promise.resolve().then(onTimeout).catch(() => undefined);
      reject(new WarehouseError('query_timeout', message ?? `The statement ran longer than ${seconds} seconds and was stopped`));
    }, seconds * 1000);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** A driver package loaded once per process; undefined when it is missing or fails to load. */
export function lazyModule<T>(load: () => Promise<T>): () => Promise<T | undefined> {
  let loaded: Promise<T | undefined> | undefined;
  return () => (loaded ??= load().catch(() => undefined));
}

/**
 * The fixed message of each code a remote's failure is classified into. A warehouse connection names any host and
 * port, so what answers may be anything (an internal admin page): its text never reaches a response or a run.
 */
export const FAILURE_MESSAGES = {
  connection_failed: 'Could not connect to the warehouse',
  connection_refused: 'The connection was refused: nothing accepts connections at that host and port',
  timeout: 'The warehouse did not answer in time',
  tls_failed: 'The TLS handshake with the warehouse failed (TLS not offered, or its certificate not trusted)',
  authentication_failed: 'The warehouse refused the credentials',
  unexpected_response: 'The server did not answer as this type of warehouse does',
  host_not_found: 'The host name does not resolve',
  address_not_allowed: 'The host is not allowed by this deployment\'s outbound policy for warehouses',
  query_failed: 'The warehouse refused the statement',
} as const;

export type FailureCode = keyof typeof FAILURE_MESSAGES;

/** A failure with its fixed message. */
export function refusal(code: FailureCode): WarehouseError {
  return new WarehouseError(code, FAILURE_MESSAGES[code]);
}

const TLS_ERROR = /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$|HOSTNAME_MISMATCH$)/;

/** The code of a socket-level failure (Node's errno and TLS codes, also when wrapped), or undefined. */
export function networkFailure(error: unknown): FailureCode | undefined {
  const seen = new Set<unknown>();
  const queue = [error];
  while (queue.length) {
    const e = queue.shift() as { code?: unknown; cause?: unknown; errors?: unknown[] } | undefined;
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const code = typeof e.code === 'string' ? e.code : '';
    if (code === 'ECONNREFUSED') return 'connection_refused';
    if (['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA'].includes(code)) return 'host_not_found';
    if (['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ECONNABORTED'].includes(code)) return 'timeout';
    if (TLS_ERROR.test(code)) return 'tls_failed';
    queue.push(e.cause, ...(Array.isArray(e.errors) ? e.errors : []));
  }
  return undefined;
}

/**
 * A driver's error as the caller may see it: a WarehouseError passes as it is (the connector's own words); anything
 * else is classified (the driver's `recognise` first, then socket-level codes, then `code`) and gets its fixed
 * message, never the error's text.
 */
export function failure(code: 'connection_failed' | 'query_failed', error: unknown, recognise?: (error: unknown) => FailureCode | undefined): WarehouseError {
  if (error instanceof WarehouseError) return error;
  return refusal(recognise?.(error) ?? networkFailure(error) ?? code);
}

/** Spec rule 6, as every refusal of an administrative role words it. */
export const ADMIN_ROLE_REFUSED =
  'A connection whose role is a built-in administrative role of the warehouse is refused (warehouse rule 6); sign in with a role that has read access only';

/** What a session that did not open within its bound reports (query_timeout, like a statement stopped at its limit). */
export function openTimeoutMessage(seconds: number): string {
  return `The warehouse did not complete sign-in and session setup within ${seconds} seconds`;
}

/** Column names and types of one table from the standard information schema (Postgres, Redshift, DuckDB). */
export const INFORMATION_SCHEMA_COLUMNS =
  'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2';
