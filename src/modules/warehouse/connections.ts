/** Warehouse connections: their settings, limits and sealed credentials, connection tests and key pairs. */
import { createHash, createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { WarehouseConnectionRow } from '../../db/schema/warehouse.js';
import type { Actor } from '../../platform/auth.js';
import { Unprocessable, type ValidationIssue } from '../../platform/errors.js';
import {
  DEFAULT_MAX_RUNS_PER_DAY,
  DEFAULT_QUERY_TIMEOUT_SECONDS,
  remainingSeconds,
  STATEMENTS_PER_RUN_MAX,
  type WarehouseAccess,
  type WarehouseContext,
} from './access.js';
import { checkFields } from './checks.js';
import { duckdbFile } from './connectors/duckdb.js';
import { ADMIN_ROLE_REFUSED, failure, WarehouseError, type Credentials, type Driver, type WarehouseSession } from './connectors/types.js';
import type { Keyring } from './credentials.js';
import { cannotChange, conflict, credentialsRequired, credentialsUndecryptable } from './errors.js';
import { isIdentifier } from './identifiers.js';
import type { ConnectionCreate, ConnectionTestBody, ConnectionTestResult, ConnectionUpdate, ConnectionView } from './schemas.js';
import { visibleSettings } from './secret-settings.js';
import * as store from './store.js';
import { WAREHOUSE_TYPES, type WarehouseType } from './types.js';

export function createConnections(ctx: WarehouseContext, access: WarehouseAccess) {
  const { db, audit, clock, config, drivers } = ctx;
  const { keys, openCredentials, connectionCredentials, connectionOr404, withJob, openSession } = access;

  /** The limits a connection shows: its own, and the worst cases per day they allow. */
  function limitsView(row: WarehouseConnectionRow) {
    const driver = drivers[row.warehouseType as WarehouseType];
    return {
      query_timeout_seconds: row.queryTimeoutSeconds,
      max_runs_per_day: row.maxRunsPerDay,
      bytes_limit: row.bytesLimit,
      worst_case_bytes_per_day: driver.billsByBytes && row.bytesLimit ? row.maxRunsPerDay * STATEMENTS_PER_RUN_MAX * row.bytesLimit : null,
      worst_case_seconds_per_day: row.maxRunsPerDay * STATEMENTS_PER_RUN_MAX * row.queryTimeoutSeconds,
    };
  }

  function toConnectionView(row: WarehouseConnectionRow, actor: Actor): ConnectionView {
    const driver = drivers[row.warehouseType as WarehouseType];
    return {
      id: row.id,
      name: row.name,
      warehouse_type: row.warehouseType as WarehouseType,
      settings: visibleSettings(row.settings, driver.settings, actor),
      status: openCredentials(row) ? 'active' : 'needs_new_credentials',
      ...limitsView(row),
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }

  /** What the audit trail keeps of a connection: never credentials. */
  function describeConnection(row: WarehouseConnectionRow) {
    const { settings, name, warehouseType, queryTimeoutSeconds, maxRunsPerDay, bytesLimit } = row;
    return { name, warehouse_type: warehouseType, settings, query_timeout_seconds: queryTimeoutSeconds, max_runs_per_day: maxRunsPerDay, bytes_limit: bytesLimit };
  }

  async function availableDriver(type: WarehouseType): Promise<Driver> {
    const driver = drivers[type];
    if (!(await driver.load())) {
      throw new Unprocessable({
        type: 'connector_disabled',
        loc: ['body', 'warehouse_type'],
        msg: 'This warehouse type is not available in this deployment: its driver is not installed',
      });
    }
    return driver;
  }

  /** Settings and credentials against the driver's fields, plus the rules the issue fixes per type. */
  function checkConnectionInput(driver: Driver, settings: Record<string, unknown>, credentials: Credentials | undefined): void {
    const issues = checkFields(driver.settings, settings, ['body', 'settings']);
    if (credentials) issues.push(...checkFields(driver.credentials, credentials, ['body', 'credentials']));
    if ((driver.type === 'postgres' || driver.type === 'redshift') && typeof settings.schema === 'string' && !isIdentifier(driver.type, settings.schema)) {
      issues.push({ type: 'identifier', loc: ['body', 'settings', 'schema'], msg: 'Not a valid identifier for this warehouse' });
    }
    if (driver.type === 'duckdb' && typeof settings.path === 'string' && !duckdbFile(config.duckdbDir, settings.path)) {
      issues.push({ type: 'path_outside_directory', loc: ['body', 'settings', 'path'], msg: 'The database file must be inside the DuckDB directory (WAREHOUSE_DUCKDB_DIR)' });
    }
    const admin = driver.adminField?.(settings, credentials ?? {});
    if (admin) issues.push({ type: 'admin_role_refused', loc: ['body', ...admin], msg: ADMIN_ROLE_REFUSED });
    if (issues.length) throw new Unprocessable(issues);
  }

  /**
   * Spec rule 6 where the role's attributes decide (driver.checksRoleOnSave): signs in with what is about to be saved
   * and refuses an administrative role (422). A sign-in that fails otherwise (unreachable, wrong password) does not
   * stop the save: the test, validation and every run sign in and check again.
   */
  async function refuseAdministrativeRole(type: WarehouseType, settings: Record<string, unknown>, credentials: Credentials): Promise<void> {
    if (!drivers[type].checksRoleOnSave) return;
    const refused = await withJob(async () => {
      let session: WarehouseSession | undefined;
      try {
        session = await openSession(type, settings, credentials, config.checkSeconds);
        return false;
      } catch (error) {
        return error instanceof WarehouseError && error.code === 'admin_role_refused';
      } finally {
        await session?.close().catch(() => undefined);
      }
    });
    if (refused) throw new Unprocessable({ type: 'admin_role_refused', loc: ['body', 'credentials', 'username'], msg: ADMIN_ROLE_REFUSED });
  }

  /**
   * True when a setting that decides where or how the connection signs in differs (SettingSpec.endpoint). A key the
   * driver does not know counts as one: only a setting declared harmless keeps the credentials. A type that signs in
   * with nothing (DuckDB) has nothing to drop.
   */
  function movesSignIn(driver: Driver, before: Record<string, unknown>, after: Record<string, unknown>): boolean {
    if (Object.keys(driver.credentials).length === 0) return false;
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].some((key) => (driver.settings[key]?.endpoint ?? true) && !isDeepStrictEqual(before[key], after[key]));
  }

  /**
   * A PUT may repeat what a GET returned (GET-modify-PUT): a field that cannot change is accepted when it equals the
   * stored value and refused at its place otherwise; status and updated_at are the server's and are ignored.
   */
  function checkUnchanged(row: WarehouseConnectionRow, body: ConnectionUpdate): void {
    const issues: ValidationIssue[] = [];
    if (body.id !== undefined && body.id !== row.id) issues.push(cannotChange('id'));
    if (body.warehouse_type !== undefined && body.warehouse_type !== row.warehouseType) issues.push(cannotChange('warehouse_type'));
    if (body.created_at !== undefined && new Date(body.created_at).getTime() !== row.createdAt.getTime()) issues.push(cannotChange('created_at'));
    if (issues.length) throw new Unprocessable(issues);
  }

  /**
   * The limit fields as a PUT means them. A GET shows bytes_limit null where the warehouse does not bill by bytes and
   * the current worst cases under the worst_case_* names; sent back unchanged they change nothing (they are not a
   * new budget), so a GET-modify-PUT that raises a limit is not refused by its own echo.
   */
  function limitsOf(row: WarehouseConnectionRow, body: ConnectionUpdate): LimitFields {
    const shown = limitsView(row);
    const sent = <T>(value: T | null | undefined, echo: T | null): T | undefined => (value === null || value === echo ? undefined : value);
    return {
      query_timeout_seconds: body.query_timeout_seconds,
      max_runs_per_day: body.max_runs_per_day,
      bytes_limit: body.bytes_limit === null && shown.bytes_limit === null ? undefined : (body.bytes_limit ?? undefined),
      worst_case_bytes_per_day: sent(body.worst_case_bytes_per_day, shown.worst_case_bytes_per_day),
      worst_case_seconds_per_day: sent(body.worst_case_seconds_per_day, shown.worst_case_seconds_per_day),
    };
  }

  /** What a PUT makes of a connection: its settings, limits and sealed credentials (null: dropped). */
  function resolveUpdate(ring: Keyring, row: WarehouseConnectionRow, body: ConnectionUpdate) {
    const driver = drivers[row.warehouseType as WarehouseType];
    checkUnchanged(row, body);
    const settings = body.settings ?? row.settings;
    checkConnectionInput(driver, settings, body.credentials);
    const limitFields = limitsOf(row, body);
    const limits = resolveLimits(driver, limitFields, row);
    // New credentials replace the old. A change of where or how it signs in drops the old (the new place must not
    // receive them); otherwise they are re-sealed with the newest key when any key opens them.
    const moved = movesSignIn(driver, row.settings, settings);
    const credentials = body.credentials ?? (moved ? undefined : openCredentials(row));
    const sealed = credentials ? ring.seal(credentials, row.id) : moved ? null : row.encryptedCredentials;
    return { settings, limits, limitFields, credentials, sealed, dropped: moved && !body.credentials && row.encryptedCredentials !== null };
  }

  type LimitFields = Pick<ConnectionCreate, 'query_timeout_seconds' | 'max_runs_per_day' | 'bytes_limit' | 'worst_case_bytes_per_day' | 'worst_case_seconds_per_day'>;

  /** Per-connection limits within the deployment's (spec "Limits"), and the optional daily worst-case budgets. */
  function resolveLimits(driver: Driver, body: LimitFields, current?: WarehouseConnectionRow) {
    const timeout = body.query_timeout_seconds ?? current?.queryTimeoutSeconds ?? Math.min(DEFAULT_QUERY_TIMEOUT_SECONDS, config.maxQueryTimeoutSeconds);
    const runs = body.max_runs_per_day ?? current?.maxRunsPerDay ?? Math.min(DEFAULT_MAX_RUNS_PER_DAY, config.maxRunsPerDay);
    const bytes = driver.billsByBytes ? (body.bytes_limit ?? current?.bytesLimit ?? config.maxBytesPerQuery) : null;
    const issues: ValidationIssue[] = [];
    const over = (field: string, max: number, setting: string) =>
      issues.push({ type: 'less_than_equal', loc: ['body', field], msg: `Input should be at most ${max} (${setting})`, ctx: { le: max } });
    if (timeout > config.maxQueryTimeoutSeconds) over('query_timeout_seconds', config.maxQueryTimeoutSeconds, 'WAREHOUSE_MAX_QUERY_TIMEOUT_SECONDS');
    if (runs > config.maxRunsPerDay) over('max_runs_per_day', config.maxRunsPerDay, 'WAREHOUSE_MAX_RUNS_PER_DAY');
    if (!driver.billsByBytes && body.bytes_limit !== undefined) {
      issues.push({ type: 'not_applicable', loc: ['body', 'bytes_limit'], msg: 'This warehouse does not bill by bytes' });
    }
    if (bytes !== null && bytes > config.maxBytesPerQuery) over('bytes_limit', config.maxBytesPerQuery, 'WAREHOUSE_MAX_BYTES_PER_QUERY');
    // A budget sent now, or the one stored with the connection, still bounds the new limits.
    const secondsBudget = body.worst_case_seconds_per_day ?? current?.worstCaseSecondsPerDay ?? undefined;
    const bytesBudget = body.worst_case_bytes_per_day ?? current?.worstCaseBytesPerDay ?? undefined;
    if (secondsBudget !== undefined && runs * STATEMENTS_PER_RUN_MAX * timeout > secondsBudget) {
      issues.push({ type: 'budget_exceeded', loc: ['body', 'worst_case_seconds_per_day'], msg: 'max_runs_per_day x 11 x query_timeout_seconds is above this budget' });
    }
    if (bytesBudget !== undefined) {
      if (bytes === null) issues.push({ type: 'not_applicable', loc: ['body', 'worst_case_bytes_per_day'], msg: 'This warehouse does not bill by bytes' });
      else if (runs * STATEMENTS_PER_RUN_MAX * bytes > bytesBudget) {
        issues.push({ type: 'budget_exceeded', loc: ['body', 'worst_case_bytes_per_day'], msg: 'max_runs_per_day x 11 x bytes_limit is above this budget' });
      }
    }
    if (issues.length) throw new Unprocessable(issues);
    return { queryTimeoutSeconds: timeout, maxRunsPerDay: runs, bytesLimit: bytes };
  }

  /**
   * Signs in and runs a statement that reads no table; sign-in, session setup and the statement share the 30 seconds
   * (config.checkSeconds). Failures are reported, not thrown.
   */
  async function testConnection(type: WarehouseType, settings: Record<string, unknown>, credentials: Credentials): Promise<ConnectionTestResult> {
    return withJob(async () => {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let session: WarehouseSession | undefined;
      try {
        session = await openSession(type, settings, credentials, config.checkSeconds);
        await session.ping(remainingSeconds(config.checkSeconds, started));
        return { ok: true, error_code: null, message: null, elapsed_ms: elapsed() };
      } catch (error) {
        const failed = failure('connection_failed', error);
        return { ok: false, error_code: failed.code, message: failed.message, elapsed_ms: elapsed() };
      } finally {
        await session?.close().catch(() => undefined);
      }
    });
  }

  return {
    async connectors() {
      return Promise.all(
        WAREHOUSE_TYPES.map(async (type) => ({
          type,
          available: await drivers[type].load(),
          bills_by_bytes: drivers[type].billsByBytes,
          key_pair: drivers[type].keyPair,
        })),
      );
    },

    async listConnections(actor: Actor): Promise<ConnectionView[]> {
      keys();
      return (await store.listConnections(db)).map((row) => toConnectionView(row, actor));
    },

    async getConnection(actor: Actor, id: string): Promise<ConnectionView> {
      keys();
      return toConnectionView(await connectionOr404(id), actor);
    },

    async createConnection(actor: Actor, body: ConnectionCreate): Promise<ConnectionView> {
      const ring = keys();
      const driver = await availableDriver(body.warehouse_type);
      checkConnectionInput(driver, body.settings, body.credentials);
      const limits = resolveLimits(driver, body);
      await refuseAdministrativeRole(body.warehouse_type, body.settings, body.credentials);
      return db.transaction(async (tx) => {
        const id = randomUUID();
        const now = clock.now();
        const row = await store.insertConnection(tx, {
          id,
          name: body.name,
          warehouseType: body.warehouse_type,
          settings: body.settings,
          encryptedCredentials: ring.seal(body.credentials, id),
          ...limits,
          worstCaseBytesPerDay: body.worst_case_bytes_per_day ?? null,
          worstCaseSecondsPerDay: body.worst_case_seconds_per_day ?? null,
          createdById: actor.id,
          createdAt: now,
          updatedAt: now,
        });
        await audit.record(tx, actor, { action: 'warehouse_connection_create', entityType: 'warehouse_connection', entityId: id, after: describeConnection(row) });
        return toConnectionView(row, actor);
      });
    },

    async updateConnection(actor: Actor, id: string, body: ConnectionUpdate): Promise<ConnectionView> {
      const ring = keys();
      const current = await connectionOr404(id);
      const type = current.warehouseType as WarehouseType;
      // Signing in to check the role happens before the transaction: a row lock (on PGlite, the whole database) must
      // not wait on a warehouse. The transaction then refuses if what was checked changed meanwhile.
      const signsIn = drivers[type].checksRoleOnSave && (body.settings !== undefined || body.credentials !== undefined);
      const checked = signsIn ? current : undefined;
      if (checked) {
        const { settings, credentials } = resolveUpdate(ring, checked, body);
        if (credentials) await refuseAdministrativeRole(type, settings, credentials);
      }
      return db.transaction(async (tx) => {
        const row = await connectionOr404(id, true, tx);
        if (checked && (row.encryptedCredentials !== checked.encryptedCredentials || !isDeepStrictEqual(row.settings, checked.settings))) {
          throw conflict('connection_changed', 'The connection changed while this change was being checked; read it again and retry');
        }
        const { settings, limits, limitFields, sealed, dropped } = resolveUpdate(ring, row, body);
        const updated = await store.updateConnection(tx, id, {
          name: body.name ?? row.name,
          settings,
          encryptedCredentials: sealed,
          ...limits,
          worstCaseBytesPerDay: limitFields.worst_case_bytes_per_day ?? row.worstCaseBytesPerDay,
          worstCaseSecondsPerDay: limitFields.worst_case_seconds_per_day ?? row.worstCaseSecondsPerDay,
          updatedAt: clock.now(),
        });
        await audit.record(tx, actor, {
          action: 'warehouse_connection_update',
          entityType: 'warehouse_connection',
          entityId: id,
          before: describeConnection(row),
          after: describeConnection(updated),
          details: { credentials_replaced: body.credentials !== undefined, credentials_dropped: dropped },
        });
        return toConnectionView(updated, actor);
      });
    },

    async deleteConnection(actor: Actor, id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await connectionOr404(id, true, tx);
        if ((await store.countSourcesOf(tx, id)) > 0) {
          throw conflict('connection_in_use', 'Delete the sources of this connection first');
        }
        await store.deleteConnection(tx, id);
        await audit.record(tx, actor, { action: 'warehouse_connection_delete', entityType: 'warehouse_connection', entityId: id, before: describeConnection(row) });
      });
    },

    async testSaved(id: string): Promise<ConnectionTestResult> {
      keys();
      const row = await connectionOr404(id);
      const credentials = await connectionCredentials(row);
      return testConnection(row.warehouseType as WarehouseType, row.settings, credentials);
    },

    /** `name` (which a create body carries) is accepted and ignored: nothing is stored. */
    async testUnsaved(body: ConnectionTestBody): Promise<ConnectionTestResult> {
      keys();
      const driver = await availableDriver(body.warehouse_type);
      checkConnectionInput(driver, body.settings, body.credentials);
      return testConnection(body.warehouse_type, body.settings, body.credentials);
    },

    /** A new RSA key pair for key-pair warehouses: the private key is sealed with the credentials, the public returned once. */
    async regenerateKey(actor: Actor, id: string) {
      const ring = keys();
      return db.transaction(async (tx) => {
        const row = await connectionOr404(id, true, tx);
        if (!drivers[row.warehouseType as WarehouseType].keyPair) {
          throw new Unprocessable({ type: 'key_pair_not_supported', loc: ['path', 'connection_id'], msg: 'This warehouse type does not sign in with a generated key pair' });
        }
        if (row.encryptedCredentials === null) throw credentialsRequired();
        const current = ring.open(row.encryptedCredentials, id);
        if (!current) throw credentialsUndecryptable();
        const { publicKey, privateKey } = generateKeyPairSync('rsa', {
          modulusLength: 2048,
          publicKeyEncoding: { type: 'spki', format: 'pem' },
          privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        });
        await store.updateConnection(tx, id, { encryptedCredentials: ring.seal({ ...current, private_key: privateKey }, id), updatedAt: clock.now() });
        const der = createPublicKey(publicKey).export({ type: 'spki', format: 'der' });
        const fingerprint = `SHA256:${createHash('sha256').update(der).digest('base64')}`;
        await audit.record(tx, actor, {
          action: 'warehouse_connection_regenerate_key',
          entityType: 'warehouse_connection',
          entityId: id,
          details: { public_key_fingerprint: fingerprint },
        });
        return { public_key: publicKey, public_key_fingerprint: fingerprint };
      });
    },
  };
}
