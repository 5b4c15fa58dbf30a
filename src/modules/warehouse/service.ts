import { generateKeyPairSync, createHash, randomUUID, createPublicKey } from 'node:crypto';
import type { WarehouseConfig } from '../../config.js';
import type { Db, Executor } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { WarehouseConnectionRow, WarehouseRunRow, WarehouseSourceRow } from '../../db/schema/warehouse.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { DomainError, Unprocessable, type Loc, type ValidationIssue } from '../../platform/errors.js';
import { metricResult, sampleRatioCheck, type ExperimentSnapshot, type LabelAggregate } from './analysis.js';
import { DRIVERS } from './connectors/index.js';
import { duckdbFile } from './connectors/duckdb.js';
import { SNOWFLAKE_ADMIN_ROLES } from './connectors/snowflake.js';
import { WarehouseError, type Credentials, type Driver, type FieldSpec, type WarehouseSession } from './connectors/types.js';
import { createKeyring, type Keyring } from './credentials.js';
import { DIALECTS } from './dialects/index.js';
import {
  CONNECTION_NOT_FOUND,
  conflict,
  credentialsUnavailable,
  credentialsUndecryptable,
  EXPERIMENT_NOT_FOUND,
  requireRole,
  RUN_NOT_FOUND,
  SOURCE_NOT_FOUND,
  warehouseBusy,
} from './errors.js';
import { FILTER_TEXT, IDENTIFIER_RULES, isIdentifier, parseTable } from './identifiers.js';
import {
  diagnosticsStatement,
  isSingleSelect,
  MAX_LABELS,
  metricStatement,
  previewStatement,
  type AssignmentSourcePlan,
  type Filter,
  type MetricSourcePlan,
  type Window,
} from './plan.js';
import { createJobGate, createRunQueue, INTERRUPTED, type RunOutcome } from './runs.js';
import type {
  ConnectionCreate,
  ConnectionTestBody,
  ConnectionTestResult,
  ConnectionUpdate,
  ConnectionView,
  MetricResult,
  PreviewBody,
  PreviewCounts,
  RunCreate,
  RunView,
  SourceCreate,
  SourceUpdate,
  SourceView,
} from './schemas.js';
import * as store from './store.js';
import { WAREHOUSE_TYPES, type Statement, type WarehouseType } from './types.js';

/** Spec limits: connection tests and source validation each have a 30-second limit. */
const CHECK_SECONDS = 30;
const DEFAULT_QUERY_TIMEOUT_SECONDS = 300;
const DEFAULT_MAX_RUNS_PER_DAY = 20;
/** A run is one diagnostics statement plus at most 10 metrics (spec limits). */
const STATEMENTS_PER_RUN_MAX = 11;
const PREVIEW_DAYS = 7;
const DAY_MS = 86_400_000;

const EDITORS = ['ADMIN', 'DEVELOPER'] as const;
const READERS = ['ADMIN', 'DEVELOPER', 'ANALYST'] as const;

/** The experiment facts an analysis needs, read through the experiments service. */
export interface ExperimentFacts extends ExperimentSnapshot {
  startDate: string | null;
  endDate: string | null;
}

export interface WarehouseDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  config: WarehouseConfig;
  /** undefined when the experiment does not exist. */
  experiment(id: string): Promise<ExperimentFacts | undefined>;
  drivers?: Record<WarehouseType, Driver>;
  onError(error: unknown): void;
}

interface RunDefinition {
  window: { start: string; end: string };
  variant_map: Record<string, string>;
  experiment?: ExperimentSnapshot;
  assignment?: SourceSnapshot;
  metrics?: SourceSnapshot[];
  source?: SourceSnapshot;
}

/** What a run keeps of a source: enough to re-read what it measured after the source changes or goes. */
interface SourceSnapshot {
  id: string;
  kind: 'assignment' | 'metric';
  name: string;
  table: string;
  columns: Record<string, string>;
  metric_type: 'proportion' | 'mean' | null;
  conversion_window_hours: number | null;
  filters: Array<{ column: string; operator: 'eq'; value: string | number | boolean }>;
  cap_value: number | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function num(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value ?? 0);
  return Number.isFinite(n) ? n : 0;
}

function timeText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(String(value)) ? String(value) : `${String(value).replace(' ', 'T')}Z`);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** A window time as sent: without an offset it is read as UTC (spec "Analysis request"). */
function parseWindowTime(text: string, loc: Loc): Date {
  const withZone = /([Zz]|[+-]\d{2}:?\d{2})$/.test(text) ? text : `${text}Z`;
  const date = new Date(withZone.replace(' ', 'T'));
  if (Number.isNaN(date.getTime())) throw new Unprocessable({ type: 'datetime_parsing', loc, msg: 'Input should be a valid datetime' });
  return date;
}

function checkFields(specs: Record<string, FieldSpec>, values: Record<string, unknown>, loc: Loc): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const key of Object.keys(values)) {
    if (!(key in specs)) issues.push({ type: 'extra_forbidden', loc: [...loc, key], msg: 'Extra inputs are not permitted' });
  }
  for (const [key, spec] of Object.entries(specs)) {
    const value = values[key];
    const at = [...loc, key];
    if (value === undefined || value === null || value === '') {
      if (spec.required) issues.push({ type: 'missing', loc: at, msg: 'Field required' });
      continue;
    }
    if (spec.kind === 'string') {
      if (typeof value !== 'string') issues.push({ type: 'string_type', loc: at, msg: 'Input should be a valid string' });
      else if (spec.maxLength && value.length > spec.maxLength) {
        issues.push({ type: 'string_too_long', loc: at, msg: `String should have at most ${spec.maxLength} characters`, ctx: { max_length: spec.maxLength } });
      }
    } else if (spec.kind === 'integer') {
      if (typeof value !== 'number' || !Number.isInteger(value)) issues.push({ type: 'int_type', loc: at, msg: 'Input should be a valid integer' });
      else if ((spec.min !== undefined && value < spec.min) || (spec.max !== undefined && value > spec.max)) {
        issues.push({ type: 'int_range', loc: at, msg: `Input should be from ${spec.min} to ${spec.max}` });
      }
    } else if (typeof value !== 'boolean') {
      issues.push({ type: 'bool_type', loc: at, msg: 'Input should be a valid boolean' });
    }
  }
  return issues;
}

function toSourceView(row: WarehouseSourceRow): SourceView {
  return {
    id: row.id,
    kind: row.kind,
    connection_id: row.connectionId,
    name: row.name,
    table: row.tableName,
    columns: row.columns,
    metric_type: row.metricType,
    conversion_window_hours: row.conversionWindowHours,
    filters: row.filters,
    cap_value: row.capValue,
    validated_at: iso(row.validatedAt),
    validation_errors: row.validationErrors,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function snapshotOf(row: WarehouseSourceRow): SourceSnapshot {
  const { connection_id: _c, validated_at: _v, validation_errors: _e, created_at: _a, updated_at: _u, ...definition } = toSourceView(row);
  return definition;
}

function toRunView(row: WarehouseRunRow): RunView {
  const definition = row.definition as unknown as RunDefinition;
  return {
    id: row.id,
    experiment_id: row.experimentId,
    kind: row.kind,
    status: row.status,
    connection_id: row.connectionId,
    connection_name: row.connectionName,
    window_start: definition.window.start,
    window_end: definition.window.end,
    created_at: row.createdAt.toISOString(),
    started_at: iso(row.startedAt),
    finished_at: iso(row.finishedAt),
    error_code: row.errorCode,
    error_message: row.errorMessage,
    results: (row.results as MetricResult[] | null) ?? null,
    srm: row.srm ?? null,
    diagnostics: row.diagnostics ?? null,
    preview: (row.preview as PreviewCounts | null) ?? null,
    sql: row.sql,
  };
}

export function createWarehouseService(deps: WarehouseDeps) {
  const { db, audit, clock, config } = deps;
  const drivers = deps.drivers ?? DRIVERS;
  const keyring: Keyring | undefined = config.credentialsKeys ? createKeyring(config.credentialsKeys) : undefined;
  const gate = createJobGate(config.maxConcurrentJobs);
  /** Sessions of runs executing in this process: shutdown cancels their statements rather than wait for them. */
  const running = new Set<WarehouseSession>();
  let stopping = false;
  const queue = createRunQueue({
    db,
    clock,
    gate,
    maxConcurrentRuns: config.maxConcurrentRuns,
    execute: (run) => executeRun(run),
    onError: deps.onError,
  });

  function keys(): Keyring {
    if (!keyring) throw credentialsUnavailable();
    return keyring;
  }

  function openCredentials(row: WarehouseConnectionRow): Credentials | undefined {
    return keys().open(row.encryptedCredentials, row.id);
  }

  function toConnectionView(row: WarehouseConnectionRow): ConnectionView {
    const driver = drivers[row.warehouseType as WarehouseType];
    return {
      id: row.id,
      name: row.name,
      warehouse_type: row.warehouseType as WarehouseType,
      settings: row.settings,
      status: openCredentials(row) ? 'active' : 'needs_new_credentials',
      query_timeout_seconds: row.queryTimeoutSeconds,
      max_runs_per_day: row.maxRunsPerDay,
      bytes_limit: row.bytesLimit,
      worst_case_bytes_per_day: driver.billsByBytes && row.bytesLimit ? row.maxRunsPerDay * STATEMENTS_PER_RUN_MAX * row.bytesLimit : null,
      worst_case_seconds_per_day: row.maxRunsPerDay * STATEMENTS_PER_RUN_MAX * row.queryTimeoutSeconds,
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
    if (driver.type === 'snowflake' && typeof settings.role === 'string' && SNOWFLAKE_ADMIN_ROLES.includes(settings.role.toUpperCase())) {
      issues.push({ type: 'admin_role_refused', loc: ['body', 'settings', 'role'], msg: 'A built-in administrative role is refused; use a role with read access only' });
    }
    if (issues.length) throw new Unprocessable(issues);
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
    return driver.open(settings, credentials, { connectTimeoutSeconds: seconds, duckdbDir: config.duckdbDir });
  }

  /** Signs in and runs a statement that reads no table, within 30 seconds; failures are reported, not thrown. */
  async function testConnection(type: WarehouseType, settings: Record<string, unknown>, credentials: Credentials): Promise<ConnectionTestResult> {
    return withJob(async () => {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let session: WarehouseSession | undefined;
      try {
        session = await openSession(type, settings, credentials, CHECK_SECONDS);
        await session.ping(CHECK_SECONDS);
        return { ok: true, error_code: null, message: null, elapsed_ms: elapsed() };
      } catch (error) {
        const failed = error instanceof WarehouseError ? error : new WarehouseError('connection_failed', 'Could not reach the warehouse');
        return { ok: false, error_code: failed.code, message: failed.message, elapsed_ms: elapsed() };
      } finally {
        await session?.close().catch(() => undefined);
      }
    });
  }

  async function connectionOr404(id: string, forUpdate = false, executor: Executor = db) {
    const row = await store.findConnection(executor, id, forUpdate);
    if (!row) throw CONNECTION_NOT_FOUND();
    return row;
  }

  async function sourceOr404(id: string): Promise<WarehouseSourceRow> {
    const row = await store.findSource(db, id);
    if (!row) throw SOURCE_NOT_FOUND();
    return row;
  }

  /** Spec "Authentication": metric sources are open to analysts (except delete); assignment sources are not. */
  function requireSourceRole(actor: Actor, kind: 'assignment' | 'metric', action: 'edit' | 'delete'): void {
    requireRole(actor, kind === 'metric' && action === 'edit' ? READERS : EDITORS);
  }

  type SourceFields = Omit<SourceCreate, 'connection_id' | 'kind'>;

  /** Checks a source definition against the warehouse's identifier rules and the issue's column conventions. */
  function checkSource(type: WarehouseType, kind: 'assignment' | 'metric', source: SourceFields): void {
    const issues: ValidationIssue[] = [];
    const rule = IDENTIFIER_RULES[type];
    if (!parseTable(type, source.table)) {
      issues.push({ type: 'table_name', loc: ['body', 'table'], msg: `Expected a fully qualified ${rule.tableForm}, each part a valid identifier for this warehouse` });
    }
    const required = kind === 'assignment' ? ['unit_id', 'variant', 'exposed_at'] : ['unit_id', 'event_at', ...(source.metric_type === 'mean' ? ['value'] : [])];
    const allowed = kind === 'assignment' ? required : ['unit_id', 'event_at', 'value'];
    const columns = source.columns as Record<string, string | undefined>;
    for (const key of required) {
      if (!columns[key]) issues.push({ type: 'missing', loc: ['body', 'columns', key], msg: 'Field required' });
    }
    for (const [key, column] of Object.entries(columns)) {
      if (column === undefined) continue;
      if (!allowed.includes(key)) issues.push({ type: 'extra_forbidden', loc: ['body', 'columns', key], msg: 'Extra inputs are not permitted' });
      else if (!isIdentifier(type, column)) issues.push({ type: 'identifier', loc: ['body', 'columns', key], msg: 'Not a valid column name for this warehouse' });
    }
    if (kind === 'assignment') {
      for (const field of ['metric_type', 'conversion_window_hours', 'cap_value'] as const) {
        if (source[field] !== undefined && source[field] !== null) {
          issues.push({ type: 'extra_forbidden', loc: ['body', field], msg: 'Only metric sources take this field' });
        }
      }
    } else if (source.cap_value !== undefined && source.cap_value !== null && source.metric_type !== 'mean') {
      issues.push({ type: 'not_applicable', loc: ['body', 'cap_value'], msg: 'cap_value applies to mean metrics only' });
    }
    (source.filters ?? []).forEach((filter, i) => {
      if (!isIdentifier(type, filter.column)) issues.push({ type: 'identifier', loc: ['body', 'filters', i, 'column'], msg: 'Not a valid column name for this warehouse' });
      if (typeof filter.value === 'string' && !FILTER_TEXT.test(filter.value)) {
        issues.push({ type: 'filter_value', loc: ['body', 'filters', i, 'value'], msg: 'A filter value may contain only letters, digits, spaces and _ . : @ / + -' });
      }
      if (typeof filter.value === 'number' && !Number.isFinite(filter.value)) {
        issues.push({ type: 'finite_number', loc: ['body', 'filters', i, 'value'], msg: 'Input should be a finite number' });
      }
    });
    if (issues.length) throw new Unprocessable(issues);
  }

  async function connectionCredentials(row: WarehouseConnectionRow): Promise<Credentials> {
    const credentials = openCredentials(row);
    if (!credentials) throw credentialsUndecryptable();
    return credentials;
  }

  /** Spec limits: max_runs_per_day analyses and previews per UTC day, counted whatever the outcome. */
  async function assertDailyRoom(tx: Executor, connection: WarehouseConnectionRow): Promise<void> {
    const now = clock.now();
    const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const resets = new Date(dayStart.getTime() + DAY_MS);
    const used = await store.countRunsSince(tx, connection.id, dayStart);
    if (used >= connection.maxRunsPerDay) {
      throw new DomainError(
        429,
        {
          code: 'daily_run_limit_reached',
          message: 'This connection has used its analyses and previews for today (UTC)',
          limit: connection.maxRunsPerDay,
          resets_at: resets.toISOString(),
        },
        { 'Retry-After': String(Math.max(1, Math.ceil((resets.getTime() - now.getTime()) / 1000))) },
      );
    }
  }

  /** Queues a run: one at a time per connection, within the daily limit, and only when this process has a job free. */
  async function enqueue(
    actor: Actor,
    connectionId: string,
    values: Pick<store.RunInsert, 'kind' | 'experimentId' | 'definition'>,
  ): Promise<RunView> {
    if (gate.available() === 0) throw warehouseBusy();
    const inProgress = () => conflict('run_in_progress', 'This connection is already running an analysis or preview; wait for it to finish');
    let row: WarehouseRunRow;
    try {
      row = await db.transaction(async (tx) => {
        // The row lock makes concurrent starts on one connection take turns over the checks below.
        const connection = await connectionOr404(connectionId, true, tx);
        await connectionCredentials(connection);
        if (await store.hasActiveRun(tx, connection.id)) throw inProgress();
        await assertDailyRoom(tx, connection);
        const run = await store.insertRun(tx, {
          id: randomUUID(),
          ...values,
          connectionId: connection.id,
          connectionName: connection.name,
          status: 'queued',
          sql: [],
          createdById: actor.id,
          createdAt: clock.now(),
        });
        await audit.record(tx, actor, {
          action: values.kind === 'analysis' ? 'warehouse_analysis_start' : 'warehouse_preview_start',
          entityType: 'warehouse_run',
          entityId: run.id,
          after: { kind: run.kind, experiment_id: run.experimentId, connection_id: connection.id, definition: run.definition },
        });
        return run;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw inProgress();
      throw error;
    }
    queue.kick();
    return toRunView(row);
  }

  function validatedSource(row: WarehouseSourceRow | undefined, kind: 'assignment' | 'metric', connectionId: string, loc: Loc): WarehouseSourceRow {
    if (!row) throw SOURCE_NOT_FOUND();
    if (row.kind !== kind) throw new Unprocessable({ type: 'source_kind', loc, msg: `Expected a ${kind} source` });
    if (row.connectionId !== connectionId) throw new Unprocessable({ type: 'source_connection', loc, msg: 'The source belongs to another connection' });
    if (!row.validatedAt) throw conflict('source_not_validated', 'Validate the source before a preview or analysis uses it');
    return row;
  }

  // ----- execution (called by the run queue) -----

  function filtersOf(s: SourceSnapshot): Filter[] {
    return s.filters.map((f) => ({ column: f.column, value: f.value }));
  }

  function assignmentPlan(type: WarehouseType, s: SourceSnapshot): AssignmentSourcePlan {
    return {
      table: parseTable(type, s.table)!,
      columns: { unit_id: s.columns.unit_id, variant: s.columns.variant, exposed_at: s.columns.exposed_at },
      filters: filtersOf(s),
    };
  }

  function metricPlan(type: WarehouseType, s: SourceSnapshot): MetricSourcePlan {
    return {
      table: parseTable(type, s.table)!,
      columns: { unit_id: s.columns.unit_id, event_at: s.columns.event_at, value: s.columns.value },
      filters: filtersOf(s),
      metricType: s.metric_type ?? 'proportion',
      conversionWindowHours: s.conversion_window_hours,
      capValue: s.cap_value,
    };
  }

  class RunFailure extends Error {
    constructor(
      readonly code: string,
      message: string,
    ) {
      super(message);
    }
  }

  async function executeRun(run: WarehouseRunRow): Promise<RunOutcome> {
    const definition = run.definition as unknown as RunDefinition;
    const sent: string[] = [];
    let session: WarehouseSession | undefined;
    try {
      const connection = await store.findConnection(db, run.connectionId);
      if (!connection) throw new RunFailure('connection_missing', 'The connection was deleted before the run started');
      const credentials = keyring?.open(connection.encryptedCredentials, connection.id);
      if (!credentials) throw new RunFailure('credentials_undecryptable', "The connection's credentials cannot be decrypted with the configured keys");
      const type = connection.warehouseType as WarehouseType;
      const driver = drivers[type];
      const dialect = DIALECTS[type];
      const limits = { timeoutSeconds: connection.queryTimeoutSeconds, maxBytes: driver.billsByBytes ? (connection.bytesLimit ?? config.maxBytesPerQuery) : undefined };
      session = await openSession(type, connection.settings, credentials, Math.min(CHECK_SECONDS, connection.queryTimeoutSeconds));
      const open = session;
      running.add(open);
      const window: Window = { start: new Date(definition.window.start), end: new Date(definition.window.end) };
      const statements: Array<Record<string, unknown>> = [];
      const send = async (kind: string, statement: Statement, extra: Record<string, unknown> = {}) => {
        // Shutdown began while the session opened or between statements: send nothing more.
        if (stopping) throw new RunFailure(INTERRUPTED, 'The server stopped while the run was executing');
        if (!isSingleSelect(statement.text)) throw new WarehouseError('not_single_select', 'Only a single SELECT may run');
        sent.push(statement.text);
        const result = await open.run(statement, limits);
        statements.push({ kind, ...extra, elapsed_ms: result.elapsedMs, job_id: result.jobId ?? null, bytes_billed: result.bytesBilled ?? null });
        return result.rows;
      };

      if (run.kind === 'preview') {
        const s = definition.source!;
        const isAssignment = s.kind === 'assignment';
        const rows = await send('preview', previewStatement(dialect, {
          table: parseTable(type, s.table)!,
          unitColumn: s.columns.unit_id,
          timeColumn: isAssignment ? s.columns.exposed_at : s.columns.event_at,
          labelColumn: isAssignment ? s.columns.variant : undefined,
          filters: filtersOf(s),
        }, window));
        if (rows.length > MAX_LABELS) throw new RunFailure('too_many_labels', `The source has more than ${MAX_LABELS} variant labels in the window`);
        const preview: PreviewCounts = {
          rows: rows.reduce((n, r) => n + num(r.row_count), 0),
          units: rows.reduce((n, r) => n + num(r.units), 0),
          units_per_label: isAssignment ? Object.fromEntries(rows.map((r) => [String(r.label), num(r.units)])) : {},
          earliest: rows.map((r) => timeText(r.earliest)).filter((t): t is string => t !== null).sort()[0] ?? null,
          latest: rows.map((r) => timeText(r.latest)).filter((t): t is string => t !== null).sort().at(-1) ?? null,
        };
        return { status: 'succeeded', preview, diagnostics: { statements }, sql: sent };
      }

      const experiment = definition.experiment!;
      const assignment = assignmentPlan(type, definition.assignment!);
      const diagnosticsRows = await send('diagnostics', diagnosticsStatement(dialect, assignment, window));
      const labelled = diagnosticsRows.filter((r) => r.label !== null && r.label !== undefined);
      if (labelled.length > MAX_LABELS) throw new RunFailure('too_many_labels', `The assignment source has more than ${MAX_LABELS} variant labels in the window`);
      const unitsPerLabel = Object.fromEntries(labelled.map((r) => [String(r.label), num(r.units)]));
      const excluded = num(diagnosticsRows.find((r) => r.label === null || r.label === undefined)?.units);

      const results: MetricResult[] = [];
      for (const metric of definition.metrics!) {
        const plan = metricPlan(type, metric);
        const rows = await send('metric', metricStatement(dialect, assignment, plan, window), { metric_source_id: metric.id });
        const aggregates: LabelAggregate[] = rows.map((r) => ({
          label: String(r.label),
          units: num(r.units),
          conversions: num(r.conversions),
          valueSum: num(r.value_sum),
          valueSumSquares: num(r.value_sum_squares),
        }));
        const units = aggregates.reduce((n, a) => n + a.units, 0);
        const total = plan.metricType === 'mean' ? aggregates.reduce((n, a) => n + a.valueSum, 0) : aggregates.reduce((n, a) => n + a.conversions, 0);
        Object.assign(statements.at(-1)!, {
          grand_mean: units > 0 ? total / units : null,
          null_values: rows.reduce((n, r) => n + num(r.null_values), 0),
        });
        results.push(metricResult(metric.id, plan.metricType, aggregates, experiment, definition.variant_map));
      }
      const earliest = diagnosticsRows.map((r) => timeText(r.earliest)).filter((t): t is string => t !== null).sort()[0] ?? null;
      const latest = diagnosticsRows.map((r) => timeText(r.latest)).filter((t): t is string => t !== null).sort().at(-1) ?? null;
      return {
        status: 'succeeded',
        results,
        srm: sampleRatioCheck(unitsPerLabel, experiment, definition.variant_map),
        diagnostics: { units_per_label: unitsPerLabel, excluded_multiple_variants: excluded, earliest_exposure: earliest, latest_exposure: latest, statements },
        sql: sent,
      };
    } catch (error) {
      if (stopping) return { status: 'failed', errorCode: INTERRUPTED, errorMessage: 'The server stopped while the run was executing', sql: sent };
      if (error instanceof RunFailure || error instanceof WarehouseError) {
        return { status: 'failed', errorCode: error.code, errorMessage: error.message, sql: sent };
      }
      throw error;
    } finally {
      if (session) running.delete(session);
      await session?.close().catch(() => undefined);
    }
  }

  function previewWindow(body: PreviewBody): Window {
    const end = body.window_end ? parseWindowTime(body.window_end, ['body', 'window_end']) : clock.now();
    const start = body.window_start ? parseWindowTime(body.window_start, ['body', 'window_start']) : new Date(end.getTime() - PREVIEW_DAYS * DAY_MS);
    return orderedWindow(start, end);
  }

  function orderedWindow(start: Date, end: Date): Window {
    if (start.getTime() >= end.getTime()) {
      throw new Unprocessable({ type: 'window_order', loc: ['body', 'window_end'], msg: 'window_end must be after window_start' });
    }
    return { start, end };
  }

  return {
    queue,

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

    async listConnections(): Promise<ConnectionView[]> {
      keys();
      return (await store.listConnections(db)).map(toConnectionView);
    },

    async getConnection(id: string): Promise<ConnectionView> {
      keys();
      return toConnectionView(await connectionOr404(id));
    },

    async createConnection(actor: Actor, body: ConnectionCreate): Promise<ConnectionView> {
      const ring = keys();
      const driver = await availableDriver(body.warehouse_type);
      checkConnectionInput(driver, body.settings, body.credentials);
      const limits = resolveLimits(driver, body);
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
        return toConnectionView(row);
      });
    },

    async updateConnection(actor: Actor, id: string, body: ConnectionUpdate): Promise<ConnectionView> {
      const ring = keys();
      return db.transaction(async (tx) => {
        const row = await connectionOr404(id, true, tx);
        const driver = drivers[row.warehouseType as WarehouseType];
        const settings = body.settings ?? row.settings;
        checkConnectionInput(driver, settings, body.credentials);
        const limits = resolveLimits(driver, body, row);
        // New credentials replace the old; otherwise the old are re-sealed with the newest key when any key opens them.
        const credentials = body.credentials ?? ring.open(row.encryptedCredentials, id);
        const updated = await store.updateConnection(tx, id, {
          name: body.name ?? row.name,
          settings,
          encryptedCredentials: credentials ? ring.seal(credentials, id) : row.encryptedCredentials,
          ...limits,
          worstCaseBytesPerDay: body.worst_case_bytes_per_day ?? row.worstCaseBytesPerDay,
          worstCaseSecondsPerDay: body.worst_case_seconds_per_day ?? row.worstCaseSecondsPerDay,
          updatedAt: clock.now(),
        });
        await audit.record(tx, actor, {
          action: 'warehouse_connection_update',
          entityType: 'warehouse_connection',
          entityId: id,
          before: describeConnection(row),
          after: describeConnection(updated),
          details: { credentials_replaced: body.credentials !== undefined },
        });
        return toConnectionView(updated);
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

    async listSources(): Promise<SourceView[]> {
      return (await store.listSources(db)).map(toSourceView);
    },

    async getSource(id: string): Promise<SourceView> {
      return toSourceView(await sourceOr404(id));
    },

    async createSource(actor: Actor, body: SourceCreate): Promise<SourceView> {
      requireSourceRole(actor, body.kind, 'edit');
      const connection = await store.findConnection(db, body.connection_id);
      if (!connection) throw new Unprocessable({ type: 'not_found', loc: ['body', 'connection_id'], msg: 'No warehouse connection has this id' });
      const source = { ...body, metric_type: body.kind === 'metric' ? (body.metric_type ?? 'proportion') : body.metric_type };
      checkSource(connection.warehouseType as WarehouseType, body.kind, source);
      return db.transaction(async (tx) => {
        const now = clock.now();
        const row = await store.insertSource(tx, {
          id: randomUUID(),
          connectionId: connection.id,
          kind: body.kind,
          name: body.name,
          tableName: body.table,
          columns: body.columns as Record<string, string>,
          metricType: source.metric_type ?? null,
          conversionWindowHours: body.conversion_window_hours ?? null,
          filters: (body.filters ?? []) as SourceSnapshot['filters'],
          capValue: body.cap_value ?? null,
          validationErrors: [],
          createdById: actor.id,
          createdAt: now,
          updatedAt: now,
        });
        await audit.record(tx, actor, { action: 'warehouse_source_create', entityType: 'warehouse_source', entityId: row.id, after: toSourceView(row) });
        return toSourceView(row);
      });
    },

    /** Any edit clears validation (spec "Warehouse source": validated -> unvalidated). */
    async updateSource(actor: Actor, id: string, body: SourceUpdate): Promise<SourceView> {
      return db.transaction(async (tx) => {
        const row = await store.findSource(tx, id, true);
        if (!row) throw SOURCE_NOT_FOUND();
        requireSourceRole(actor, row.kind, 'edit');
        const connection = await connectionOr404(row.connectionId, false, tx);
        const merged = {
          name: body.name ?? row.name,
          table: body.table ?? row.tableName,
          columns: body.columns ?? (row.columns as SourceFields['columns']),
          metric_type: body.metric_type ?? row.metricType ?? undefined,
          conversion_window_hours: body.conversion_window_hours !== undefined ? body.conversion_window_hours : row.conversionWindowHours,
          filters: body.filters ?? row.filters,
          cap_value: body.cap_value !== undefined ? body.cap_value : row.capValue,
        };
        checkSource(connection.warehouseType as WarehouseType, row.kind, merged);
        const updated = await store.updateSource(tx, id, {
          name: merged.name,
          tableName: merged.table,
          columns: merged.columns as Record<string, string>,
          metricType: merged.metric_type ?? null,
          conversionWindowHours: merged.conversion_window_hours ?? null,
          filters: merged.filters as SourceSnapshot['filters'],
          capValue: merged.cap_value ?? null,
          validatedAt: null,
          validationErrors: [],
          updatedAt: clock.now(),
        });
        await audit.record(tx, actor, {
          action: 'warehouse_source_update',
          entityType: 'warehouse_source',
          entityId: id,
          before: toSourceView(row),
          after: toSourceView(updated),
        });
        return toSourceView(updated);
      });
    },

    async deleteSource(actor: Actor, id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await store.findSource(tx, id, true);
        if (!row) throw SOURCE_NOT_FOUND();
        requireSourceRole(actor, row.kind, 'delete');
        await store.deleteSource(tx, id);
        await audit.record(tx, actor, { action: 'warehouse_source_delete', entityType: 'warehouse_source', entityId: id, before: toSourceView(row) });
      });
    },

    /** Checks table and columns against the warehouse's metadata only (no data read), within 30 seconds. */
    async validateSource(actor: Actor, id: string): Promise<{ valid: boolean; errors: string[] }> {
      const row = await sourceOr404(id);
      requireSourceRole(actor, row.kind, 'edit');
      keys();
      const connection = await connectionOr404(row.connectionId);
      const credentials = await connectionCredentials(connection);
      const type = connection.warehouseType as WarehouseType;
      const errors = await withJob(async () => {
        let session: WarehouseSession | undefined;
        try {
          session = await openSession(type, connection.settings, credentials, CHECK_SECONDS);
          const columns = await session.columns(parseTable(type, row.tableName)!, CHECK_SECONDS);
          if (!columns) return ['The table does not exist, or this connection cannot see it'];
          const found: string[] = [];
          const lower = new Map([...columns].map(([name, dataType]) => [name, dataType.toLowerCase()]));
          for (const [key, column] of Object.entries(row.columns)) {
            const dataType = lower.get(column);
            if (dataType === undefined) found.push(`The ${key} column is not in the table`);
            else if ((key === 'exposed_at' || key === 'event_at') && !/time|date/.test(dataType)) found.push(`The ${key} column is not a date or time`);
            else if (key === 'value' && !/int|float|double|decimal|numeric|real|number/.test(dataType)) found.push('The value column is not numeric');
          }
          row.filters.forEach((f, i) => {
            if (!lower.has(f.column)) found.push(`The column of filter ${i + 1} is not in the table`);
          });
          return found;
        } catch (error) {
          return [error instanceof WarehouseError ? error.message : 'Could not read the table metadata'];
        } finally {
          await session?.close().catch(() => undefined);
        }
      });
      await db.transaction(async (tx) => {
        const current = await store.findSource(tx, id, true);
        // An edit while the check ran changed what was checked: its result no longer applies.
        if (!current || current.updatedAt.getTime() !== row.updatedAt.getTime()) return;
        await store.updateSource(tx, id, { validatedAt: errors.length ? null : clock.now(), validationErrors: errors });
        await audit.record(tx, actor, { action: 'warehouse_source_validate', entityType: 'warehouse_source', entityId: id, details: { valid: errors.length === 0, errors } });
      });
      return { valid: errors.length === 0, errors };
    },

    async preview(actor: Actor, id: string, body: PreviewBody): Promise<RunView> {
      const row = await sourceOr404(id);
      requireSourceRole(actor, row.kind, 'edit');
      keys();
      const source = validatedSource(row, row.kind, row.connectionId, ['path', 'source_id']);
      const window = previewWindow(body);
      const definition: RunDefinition = { window: { start: window.start.toISOString(), end: window.end.toISOString() }, variant_map: {}, source: snapshotOf(source) };
      return enqueue(actor, row.connectionId, { kind: 'preview', experimentId: null, definition: definition as unknown as Record<string, unknown> });
    },

    async startAnalysis(actor: Actor, experimentId: string, body: RunCreate): Promise<RunView> {
      keys();
      const experiment = await deps.experiment(experimentId);
      if (!experiment) throw EXPERIMENT_NOT_FOUND();
      const connection = await connectionOr404(body.connection_id);
      const sources = new Map((await store.findSources(db, [body.assignment_source_id, ...body.metric_source_ids])).map((s) => [s.id, s]));
      const assignment = validatedSource(sources.get(body.assignment_source_id), 'assignment', connection.id, ['body', 'assignment_source_id']);
      const metrics = body.metric_source_ids.map((sid, i) => validatedSource(sources.get(sid), 'metric', connection.id, ['body', 'metric_source_ids', i]));
      const variantIds = new Set(experiment.variants.map((v) => v.id));
      const variantMap = body.variant_map ?? {};
      const unknown = Object.entries(variantMap).filter(([, vid]) => !variantIds.has(vid));
      if (unknown.length) {
        throw new Unprocessable(unknown.map(([label]) => ({ type: 'variant', loc: ['body', 'variant_map', label], msg: 'Not a variant of this experiment' })));
      }
      // Default window: the experiment's start date up to its end date or now (spec "Analysis request").
      const startText = body.window_start ?? experiment.startDate;
      if (!startText) throw new Unprocessable({ type: 'missing', loc: ['body', 'window_start'], msg: 'The experiment has not started; send window_start' });
      const start = parseWindowTime(startText, ['body', 'window_start']);
      const end = body.window_end ? parseWindowTime(body.window_end, ['body', 'window_end']) : experiment.endDate ? new Date(experiment.endDate) : clock.now();
      const window = orderedWindow(start, end);
      const { startDate: _s, endDate: _e, ...snapshot } = experiment;
      const definition: RunDefinition = {
        window: { start: window.start.toISOString(), end: window.end.toISOString() },
        variant_map: variantMap,
        experiment: snapshot,
        assignment: snapshotOf(assignment),
        metrics: metrics.map(snapshotOf),
      };
      return enqueue(actor, connection.id, { kind: 'analysis', experimentId, definition: definition as unknown as Record<string, unknown> });
    },

    async listRuns(experimentId: string, skip: number, limit: number): Promise<RunView[]> {
      if (!(await deps.experiment(experimentId))) throw EXPERIMENT_NOT_FOUND();
      return (await store.listExperimentRuns(db, experimentId, skip, limit)).map(toRunView);
    },

    async getRun(id: string): Promise<RunView> {
      const row = await store.findRun(db, id);
      if (!row) throw RUN_NOT_FOUND();
      return toRunView(row);
    },

    /** Scheduler tick: fail runs whose worker is gone, then look for queued work. */
    async tick(now: Date): Promise<void> {
      await queue.reap(now);
      queue.kick();
    },

    drain: () => queue.drain(),
    /** Shutdown: no new runs start, statements in flight are cancelled and their runs fail as interrupted. */
    async stop(): Promise<void> {
      stopping = true;
      const stopped = queue.stop();
      await Promise.all([...running].map((session) => session.cancel().catch(() => undefined)));
      await stopped;
    },
  };
}

export type WarehouseService = ReturnType<typeof createWarehouseService>;

/** The experiment fields an analysis reads, as the experiments service shows them. */
interface ExperimentLike {
  experiment_type: string;
  confidence_level: number;
  start_date: string | null;
  end_date: string | null;
  variants: Array<{ id: string; name: string; is_control: boolean; traffic_allocation: number }>;
}

/** Adapts the experiments service's `get` (which throws a 404) to the lookup this service needs. */
export function experimentFacts(get: (id: string) => Promise<ExperimentLike>): WarehouseDeps['experiment'] {
  return async (id) => {
    let view: ExperimentLike;
    try {
      view = await get(id);
    } catch (error) {
      if (error instanceof DomainError && error.statusCode === 404) return undefined;
      throw error;
    }
    return {
      type: view.experiment_type,
      confidenceLevel: view.confidence_level,
      startDate: view.start_date,
      endDate: view.end_date,
      variants: view.variants.map((v) => ({ id: v.id, name: v.name, isControl: v.is_control, trafficAllocation: v.traffic_allocation })),
    };
  };
}
