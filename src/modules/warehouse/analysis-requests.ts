/** Previews and analyses: checks, the daily limit and the queue on the way in; the runs and their results on the way out. */
import { randomUUID } from 'node:crypto';
import type { DefinitionSettings } from '../../analysis/types.js';
import type { Executor } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { WarehouseConnectionRow, WarehouseRunRow, WarehouseSourceRow } from '../../db/schema/warehouse.js';
import type { Actor } from '../../platform/auth.js';
import { DomainError, Unprocessable, type Loc, type ValidationIssue } from '../../platform/errors.js';
import { DAY_MS, PREVIEW_DAYS, type WarehouseAccess, type WarehouseContext } from './access.js';
import { orderedWindow, parseWindowTime } from './checks.js';
import { conflict, EXPERIMENT_NOT_FOUND, RUN_NOT_FOUND, SOURCE_NOT_FOUND, warehouseBusy } from './errors.js';
import type { Window } from './plan.js';
import type { RunQueue } from './runs.js';
import type { PreviewBody, RunCreate, RunView } from './schemas.js';
import type { ExperimentFacts } from './statistics.js';
import type { createSources } from './sources.js';
import * as store from './store.js';
import { snapshotOf, toRunView, type DefinitionRun, type RunDefinition } from './views.js';

/** Statements of an analysis besides the diagnostics one (spec limits). */
const MAX_METRICS = 10;

export interface AnalysesDeps {
  queue: RunQueue;
  sources: Pick<ReturnType<typeof createSources>, 'sourceOr404' | 'requireSourceRole'>;
  experiment(id: string): Promise<ExperimentFacts | undefined>;
  /** The metric-definitions module's service: what each definition says to analyse, as stored now. */
  definitions?: { analysisSettings(ids: string[]): Promise<DefinitionSettings[]> };
}

export function createAnalyses(ctx: WarehouseContext, access: WarehouseAccess, deps: AnalysesDeps) {
  const { db, audit, clock, gate } = ctx;
  const { keys, connectionCredentials, connectionOr404 } = access;
  const { queue } = deps;
  const { sourceOr404, requireSourceRole } = deps.sources;

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

  /** At least one metric and at most MAX_METRICS, inline and definitions together (spec limits: one statement each). */
  function metricCount(body: RunCreate): void {
    const count = body.metric_source_ids.length + (body.metric_definitions?.length ?? 0);
    if (count === 0) throw new Unprocessable({ type: 'too_short', loc: ['body', 'metric_source_ids'], msg: 'List should have at least 1 item', ctx: { min_length: 1 } });
    if (count > MAX_METRICS) {
      throw new Unprocessable({
        type: 'too_long', loc: ['body', 'metric_definitions'], msg: `At most ${MAX_METRICS} metrics in all (metric_source_ids and metric_definitions)`, ctx: { max_length: MAX_METRICS },
      });
    }
  }

  /**
   * The definitions to analyse, read through the metric-definitions service as stored now (the run keeps them, with
   * their version), each with its validated source: a metric source mapping event_name, and value where the
   * definition sums values. 422 at the entry's field otherwise.
   */
  async function definitionMetrics(body: RunCreate, connectionId: string): Promise<DefinitionRun[]> {
    const entries = body.metric_definitions ?? [];
    if (entries.length === 0) return [];
    const settings = new Map((await (deps.definitions?.analysisSettings(entries.map((e) => e.metric_definition_id)) ?? [])).map((d) => [d.id, d]));
    const rows = new Map((await store.findSources(db, entries.map((e) => e.source_id))).map((s) => [s.id, s]));
    const issues: ValidationIssue[] = [];
    const out: DefinitionRun[] = [];
    entries.forEach((entry, i) => {
      const loc = (field: string): Loc => ['body', 'metric_definitions', i, field];
      const definition = settings.get(entry.metric_definition_id);
      if (!definition) issues.push({ type: 'value_error', loc: loc('metric_definition_id'), msg: 'Value error, Unknown metric definition' });
      const source = validatedSource(rows.get(entry.source_id), 'metric', connectionId, loc('source_id'));
      const reads = definition ? [definition.value, definition.numerator, definition.denominator] : [];
      if (!source.columns.event_name) {
        issues.push({ type: 'source_columns', loc: loc('source_id'), msg: 'The source maps no event_name column, so it cannot tell the definition\'s events apart' });
      } else if (reads.some((a) => a?.aggregate === 'sum') && !source.columns.value) {
        issues.push({ type: 'source_columns', loc: loc('source_id'), msg: 'The definition sums event values and the source maps no value column' });
      }
      if (definition) out.push({ settings: definition, source: snapshotOf(source) });
    });
    if (issues.length) throw new Unprocessable(issues);
    return out;
  }

  function previewWindow(body: PreviewBody): Window {
    const end = body.window_end ? parseWindowTime(body.window_end, ['body', 'window_end']) : clock.now();
    const start = body.window_start ? parseWindowTime(body.window_start, ['body', 'window_start']) : new Date(end.getTime() - PREVIEW_DAYS * DAY_MS);
    return orderedWindow(start, end);
  }

  return {
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
      metricCount(body);
      const sources = new Map((await store.findSources(db, [body.assignment_source_id, ...body.metric_source_ids])).map((s) => [s.id, s]));
      const assignment = validatedSource(sources.get(body.assignment_source_id), 'assignment', connection.id, ['body', 'assignment_source_id']);
      const metrics = body.metric_source_ids.map((sid, i) => validatedSource(sources.get(sid), 'metric', connection.id, ['body', 'metric_source_ids', i]));
      const definitions = await definitionMetrics(body, connection.id);
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
        ...(definitions.length ? { definitions } : {}),
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
  };
}
