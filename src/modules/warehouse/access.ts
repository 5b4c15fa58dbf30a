/**
 * What the parts of the warehouse service share (connections, sources, analyses, run execution): the deployment's
 * limits, the process's state, and the helpers that guard credentials, find a connection and open a session.
 */
import type { WarehouseConfig } from '../../config.js';
import type { Db, Executor } from '../../db/client.js';
import type { WarehouseConnectionRow } from '../../db/schema/warehouse.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Clock } from '../../platform/clock.js';
import { refusal, WarehouseError, type Credentials, type Driver, type WarehouseSession } from './connectors/types.js';
import type { Keyring } from './credentials.js';
import { CONNECTION_NOT_FOUND, credentialsRequired, credentialsUnavailable, credentialsUndecryptable, warehouseBusy } from './errors.js';
import { pinnedLookup, type OutboundGuard } from './outbound.js';
import type { JobGate } from './runs.js';
import * as store from './store.js';
import type { WarehouseType } from './types.js';

export const DEFAULT_QUERY_TIMEOUT_SECONDS = 300;
export const DEFAULT_MAX_RUNS_PER_DAY = 20;
/** A run is one diagnostics statement plus at most 10 metrics (spec limits). */
export const STATEMENTS_PER_RUN_MAX = 11;
export const PREVIEW_DAYS = 7;
export const DAY_MS = 86_400_000;

export const EDITORS = ['ADMIN', 'DEVELOPER'] as const;
export const READERS = ['ADMIN', 'DEVELOPER', 'ANALYST'] as const;

export interface WarehouseContext {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  config: WarehouseConfig;
  drivers: Record<WarehouseType, Driver>;
  /** Checks the host a connection names before any socket is opened (WAREHOUSE_ALLOWED_HOSTS and the rest). */
  outbound: OutboundGuard;
  /** undefined when no WAREHOUSE_CREDENTIALS_KEYS are configured. */
  keyring: Keyring | undefined;
  gate: JobGate;
  /** Sessions of runs executing in this process: shutdown cancels their statements rather than wait for them. */
  running: Set<WarehouseSession>;
  /** Shutdown began: no statement is sent any more. */
  stopping: boolean;
}

export type WarehouseAccess = ReturnType<typeof createWarehouseAccess>;

/** What is left of a `seconds` bound that began at `started` (performance.now()), at least one second. */
export function remainingSeconds(seconds: number, started: number): number {
  return Math.max(1, Math.ceil(seconds - (performance.now() - started) / 1000));
}

export function createWarehouseAccess(ctx: WarehouseContext) {
  const { db, config, drivers, keyring, gate, outbound } = ctx;

  function keys(): Keyring {
    if (!keyring) throw credentialsUnavailable();
    return keyring;
  }

  /** undefined when they were dropped or no configured key opens them. */
  function openCredentials(row: WarehouseConnectionRow): Credentials | undefined {
    return row.encryptedCredentials === null ? undefined : keys().open(row.encryptedCredentials, row.id);
  }

  async function connectionCredentials(row: WarehouseConnectionRow): Promise<Credentials> {
    if (row.encryptedCredentials === null) throw credentialsRequired();
    const credentials = openCredentials(row);
    if (!credentials) throw credentialsUndecryptable();
    return credentials;
  }

  async function connectionOr404(id: string, forUpdate = false, executor: Executor = db) {
    const row = await store.findConnection(executor, id, forUpdate);
    if (!row) throw CONNECTION_NOT_FOUND();
    return row;
  }

  /** Takes one of this process's warehouse jobs for `work`, or refuses at once (429 warehouse_busy). */
  async function withJob<T>(work: () => Promise<T>): Promise<T> {
    const release = gate.tryAcquire();
    if (!release) throw warehouseBusy();
    try {
      return await work();
    } finally {
      release();
    }
  }

  async function openSession(type: WarehouseType, settings: Record<string, unknown>, credentials: Credentials, seconds: number): Promise<WarehouseSession> {
    const driver = drivers[type];
    if (!(await driver.load())) throw new WarehouseError('connector_unavailable', 'The driver of this warehouse type is not installed');
    // The one outbound guard every test, validation and run goes through: refused hosts never see a socket, and the
    // driver connects to the addresses checked here.
    let host: string | undefined;
    try {
      host = driver.host?.(settings);
    } catch {
      // Settings stored before their checks existed, which no longer name a host.
      throw refusal('connection_failed');
    }
    const checked = host === undefined ? undefined : await outbound.check(host);
    return driver.open(settings, credentials, { connectTimeoutSeconds: seconds, duckdbDir: config.duckdbDir, lookup: checked && pinnedLookup(checked) });
  }

  return { keys, openCredentials, connectionCredentials, connectionOr404, withJob, openSession };
}
