/** What runs store of their definition and sources, and the response shapes of sources and runs (pure). */
import type { WarehouseRunRow, WarehouseSourceRow } from '../../db/schema/warehouse.js';
import type { DefinitionSettings } from '../../analysis/types.js';
import type { ExperimentSnapshot } from './statistics.js';
import type { DefinitionMetricResult, MetricResult, PreviewCounts, RunView, SourceView } from './schemas.js';

export interface RunDefinition {
  window: { start: string; end: string };
  variant_map: Record<string, string>;
  experiment?: ExperimentSnapshot;
  assignment?: SourceSnapshot;
  metrics?: SourceSnapshot[];
  /** Metric library definitions, as stored when the run was asked for, each with the source of its events. */
  definitions?: DefinitionRun[];
  source?: SourceSnapshot;
}

export interface DefinitionRun {
  settings: DefinitionSettings;
  source: SourceSnapshot;
}

/** What a run keeps of a source: enough to re-read what it measured after the source changes or goes. */
export interface SourceSnapshot {
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

export const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function num(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value ?? 0);
  return Number.isFinite(n) ? n : 0;
}

export function timeText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(String(value)) ? String(value) : `${String(value).replace(' ', 'T')}Z`);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}


export function toSourceView(row: WarehouseSourceRow): SourceView {
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

export function snapshotOf(row: WarehouseSourceRow): SourceSnapshot {
  const { connection_id: _c, validated_at: _v, validation_errors: _e, created_at: _a, updated_at: _u, ...definition } = toSourceView(row);
  return definition;
}

export function toRunView(row: WarehouseRunRow): RunView {
  const definition = row.definition as unknown as RunDefinition;
  const results = row.results as Array<MetricResult | DefinitionMetricResult> | null;
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
    // Definition results are kept in the same column, told apart by their metric_definition_id.
    results: results ? (results.filter((r) => !('metric_definition_id' in r)) as MetricResult[]) : null,
    definition_results: results ? (results.filter((r) => 'metric_definition_id' in r) as DefinitionMetricResult[]) : null,
    srm: row.srm ?? null,
    diagnostics: row.diagnostics ?? null,
    preview: (row.preview as PreviewCounts | null) ?? null,
    sql: row.sql,
  };
}
