/** Runs a queued preview or analysis against the warehouse (called by the run queue) and gives its outcome. */
import type { WarehouseRunRow } from '../../db/schema/warehouse.js';
import { type WarehouseAccess, type WarehouseContext } from './access.js';
import { metricResult, sampleRatioCheck, type LabelAggregate } from './statistics.js';
import { armLabels, definitionMetricResult, statsFromRows } from './definition-results.js';
import { definitionStatement, type EventSourcePlan } from './plan-definitions.js';
import { WarehouseError, type WarehouseSession } from './connectors/types.js';
import { DIALECTS } from './dialects/index.js';
import { CREDENTIALS_REQUIRED_MESSAGE } from './errors.js';
import { parseTable } from './identifiers.js';
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
import { INTERRUPTED, type RunOutcome } from './runs.js';
import type { DefinitionMetricResult, MetricResult, PreviewCounts } from './schemas.js';
import * as store from './store.js';
import type { Statement, WarehouseType } from './types.js';
import { num, timeText, type RunDefinition, type SourceSnapshot } from './views.js';

export function createRunExecutor(ctx: WarehouseContext, access: Pick<WarehouseAccess, 'openSession'>) {
  const { db, config, drivers, running } = ctx;
  const { openSession } = access;

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

  function eventSourcePlan(type: WarehouseType, s: SourceSnapshot): EventSourcePlan {
    return {
      table: parseTable(type, s.table)!,
      columns: { unit_id: s.columns.unit_id, event_at: s.columns.event_at, event_name: s.columns.event_name, value: s.columns.value },
      filters: filtersOf(s),
      conversionWindowHours: s.conversion_window_hours,
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
      if (connection.encryptedCredentials === null) throw new RunFailure('credentials_required', CREDENTIALS_REQUIRED_MESSAGE);
      const credentials = ctx.keyring?.open(connection.encryptedCredentials, connection.id);
      if (!credentials) throw new RunFailure('credentials_undecryptable', "The connection's credentials cannot be decrypted with the configured keys");
      const type = connection.warehouseType as WarehouseType;
      const driver = drivers[type];
      const dialect = DIALECTS[type];
      const limits = { timeoutSeconds: connection.queryTimeoutSeconds, maxBytes: driver.billsByBytes ? (connection.bytesLimit ?? config.maxBytesPerQuery) : undefined };
      session = await openSession(type, connection.settings, credentials, Math.min(config.checkSeconds, connection.queryTimeoutSeconds));
      const open = session;
      running.add(open);
      const window: Window = { start: new Date(definition.window.start), end: new Date(definition.window.end) };
      const statements: Array<Record<string, unknown>> = [];
      const send = async (kind: string, statement: Statement, extra: Record<string, unknown> = {}) => {
        // Shutdown began while the session opened or between statements: send nothing more.
        if (ctx.stopping) throw new RunFailure(INTERRUPTED, 'The server stopped while the run was executing');
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
      const definitionResults: DefinitionMetricResult[] = [];
      const labels = armLabels(Object.keys(unitsPerLabel), experiment, definition.variant_map);
      const unitsPerArm = experiment.variants.map((_, i) => labels.arms.filter((a) => a.arm === i).reduce((n, a) => n + unitsPerLabel[a.label], 0));
      for (const { settings, source } of definition.definitions ?? []) {
        // No label of any variant: nothing to analyse, and no statement to send.
        const rows = labels.arms.length === 0 ? [] : await send(
          'definition',
          definitionStatement(dialect, assignment, eventSourcePlan(type, source), settings, labels.arms, window, experiment.confidenceLevel),
          { metric_definition_id: settings.id, metric_source_id: source.id },
        );
        definitionResults.push(definitionMetricResult(settings, source.id, experiment, statsFromRows(settings, experiment, rows, unitsPerArm), labels));
      }
      const earliest = diagnosticsRows.map((r) => timeText(r.earliest)).filter((t): t is string => t !== null).sort()[0] ?? null;
      const latest = diagnosticsRows.map((r) => timeText(r.latest)).filter((t): t is string => t !== null).sort().at(-1) ?? null;
      return {
        status: 'succeeded',
        results: [...results, ...definitionResults],
        srm: sampleRatioCheck(unitsPerLabel, experiment, definition.variant_map),
        diagnostics: { units_per_label: unitsPerLabel, excluded_multiple_variants: excluded, earliest_exposure: earliest, latest_exposure: latest, statements },
        sql: sent,
      };
    } catch (error) {
      if (ctx.stopping) return { status: 'failed', errorCode: INTERRUPTED, errorMessage: 'The server stopped while the run was executing', sql: sent };
      if (error instanceof RunFailure || error instanceof WarehouseError) {
        return { status: 'failed', errorCode: error.code, errorMessage: error.message, sql: sent };
      }
      throw error;
    } finally {
      if (session) running.delete(session);
      await session?.close().catch(() => undefined);
    }
  }

  return executeRun;
}
