import { Type, type Static } from 'typebox';
import { DateTime, JsonObject, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';
import { DefinitionResult, MetricResult as AnalysisMetricResult, VariantResult as AnalysisVariantResult } from '../../analysis/model.js';
import { WAREHOUSE_TYPES } from './types.js';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Credentials = Type.Record(Type.String(), Type.String({ maxLength: 8192 }), {
  description: 'Sent only in a request body; stored encrypted and never returned',
  maxProperties: 20,
});
/** A date-time with or without offset (without one it is read as UTC, spec "Analysis request"). */
const WindowTime = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}[Tt ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?([Zz]|[+-]\\d{2}:?\\d{2})?$',
  examples: ['2026-01-01T00:00:00Z'],
});

export const ConnectorView = Type.Object({
  type: StringEnum(WAREHOUSE_TYPES),
  available: Type.Boolean({ description: 'Its driver loads in this deployment' }),
  bills_by_bytes: Type.Boolean(),
  key_pair: Type.Boolean({ description: 'The platform can generate the key pair (regenerate-key)' }),
});

const Limits = {
  query_timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 300; at most WAREHOUSE_MAX_QUERY_TIMEOUT_SECONDS' })),
  max_runs_per_day: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 20; at most WAREHOUSE_MAX_RUNS_PER_DAY' })),
  bytes_limit: Type.Optional(Type.Integer({ minimum: 1, description: 'Warehouses billing by bytes only; default and maximum WAREHOUSE_MAX_BYTES_PER_QUERY' })),
  worst_case_bytes_per_day: Type.Optional(Type.Integer({ minimum: 1, description: 'A daily budget: refused when max_runs_per_day x 11 x bytes_limit is above it' })),
  worst_case_seconds_per_day: Type.Optional(Type.Integer({ minimum: 1, description: 'A daily budget: refused when max_runs_per_day x 11 x query_timeout_seconds is above it' })),
};

export const ConnectionCreate = Type.Object(
  { name: Name, warehouse_type: StringEnum(WAREHOUSE_TYPES), settings: JsonObject(), credentials: Credentials, ...Limits },
  { additionalProperties: false, examples: [
    {
      name: 'Analytics replica',
      warehouse_type: 'postgres',
      settings: { host: 'analytics-replica.internal', port: 5432, database: 'analytics', schema: 'events', ssl: true },
      credentials: { username: 'uplift_reader', password: 'change-me' },
      query_timeout_seconds: 300,
      max_runs_per_day: 20,
      worst_case_seconds_per_day: 66_000,
    },
  ] },
);
export type ConnectionCreate = Static<typeof ConnectionCreate>;

/**
 * What a GET returns may be sent back (GET-modify-PUT): fields that cannot change are accepted when they equal the
 * stored value, the server's own state (status, updated_at, validation) is ignored.
 */
const ReadBack = {
  id: Type.Optional(Uuid({ description: 'Cannot change: accepted when it is the stored value' })),
  created_at: Type.Optional(DateTime({ description: 'Cannot change: accepted when it is the stored value' })),
  updated_at: Type.Optional(DateTime({ description: 'Set by the server; ignored' })),
};

export const ConnectionUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    settings: Type.Optional(JsonObject({ description: 'A change of where or how to sign in (host, port, url, account, database, ssl...) drops the stored credentials unless credentials are sent too' })),
    credentials: Type.Optional(Credentials),
    ...Limits,
    bytes_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, description: 'Warehouses billing by bytes only (null as a GET shows it elsewhere); default and maximum WAREHOUSE_MAX_BYTES_PER_QUERY' }))),
    worst_case_bytes_per_day: Type.Optional(Nullable(Type.Integer({ minimum: 1, description: 'A daily budget; the value a GET shows (the current worst case) or null changes nothing' }))),
    worst_case_seconds_per_day: Type.Optional(Type.Integer({ minimum: 1, description: 'A daily budget; the value a GET shows (the current worst case) changes nothing' })),
    warehouse_type: Type.Optional(StringEnum(WAREHOUSE_TYPES, { description: 'Cannot change: accepted when it is the stored value' })),
    status: Type.Optional(StringEnum(['active', 'needs_new_credentials'], { description: 'Set by the server; ignored' })),
    ...ReadBack,
  },
  { additionalProperties: false, examples: [
    { credentials: { username: 'uplift_reader', password: 'rotated-secret' } },
    { name: 'Analytics replica (EU)', query_timeout_seconds: 600, max_runs_per_day: 10 },
  ] },
);
export type ConnectionUpdate = Static<typeof ConnectionUpdate>;

export const ConnectionTestBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200, description: 'Accepted so a create body can be tested as it is; ignored, nothing is stored' })),
    warehouse_type: StringEnum(WAREHOUSE_TYPES),
    settings: JsonObject(),
    credentials: Credentials,
  },
  { additionalProperties: false, examples: [
    {
      warehouse_type: 'postgres',
      settings: { host: 'analytics-replica.internal', port: 5432, database: 'analytics', ssl: true },
      credentials: { username: 'uplift_reader', password: 'change-me' },
    },
  ] },
);
export type ConnectionTestBody = Static<typeof ConnectionTestBody>;

export const ConnectionView = Type.Object({
  id: Uuid(),
  name: Type.String(),
  warehouse_type: StringEnum(WAREHOUSE_TYPES),
  settings: JsonObject(),
  status: StringEnum(['active', 'needs_new_credentials']),
  query_timeout_seconds: Type.Integer(),
  max_runs_per_day: Type.Integer(),
  bytes_limit: Nullable(Type.Integer()),
  worst_case_bytes_per_day: Nullable(Type.Integer()),
  worst_case_seconds_per_day: Type.Integer(),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export type ConnectionView = Static<typeof ConnectionView>;

export const ConnectionTestResult = Type.Object({
  ok: Type.Boolean(),
  error_code: Nullable(Type.String()),
  message: Nullable(Type.String()),
  elapsed_ms: Type.Integer(),
});
export type ConnectionTestResult = Static<typeof ConnectionTestResult>;

export const GeneratedKey = Type.Object({
  public_key: Type.String({ description: 'PEM (SPKI); shown once' }),
  public_key_fingerprint: Type.String({ description: 'SHA256:<base64>, as Snowflake shows RSA_PUBLIC_KEY_FP' }),
});

const ColumnName = Type.String({ minLength: 1, maxLength: 128 });
const Filter = Type.Object(
  {
    column: ColumnName,
    operator: StringEnum(['eq']),
    value: Type.Union([Type.String({ maxLength: 256 }), Type.Number(), Type.Boolean()]),
  },
  { additionalProperties: false },
);

const SourceColumns = Type.Object(
  {
    unit_id: ColumnName,
    variant: Type.Optional(ColumnName),
    exposed_at: Type.Optional(ColumnName),
    event_at: Type.Optional(ColumnName),
    value: Type.Optional(ColumnName),
    event_name: Type.Optional(ColumnName),
  },
  {
    additionalProperties: false,
    description:
      'Assignment sources: unit_id, variant, exposed_at. Metric sources: unit_id, event_at, value (mean), event_name (the column naming each row\'s event: needed to analyse metric library definitions)',
  },
);

const SourceFields = {
  name: Name,
  table: Type.String({ minLength: 1, maxLength: 400, description: 'Fully qualified: schema.table, project.dataset.table, ...' }),
  columns: SourceColumns,
  metric_type: Type.Optional(StringEnum(['proportion', 'mean'])),
  conversion_window_hours: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 87_600 }))),
  filters: Type.Optional(Type.Array(Filter, { maxItems: 20 })),
  cap_value: Type.Optional(Nullable(Type.Number({ minimum: 0 }))),
};

export const SourceCreate = Type.Object(
  { kind: StringEnum(['assignment', 'metric']), connection_id: Uuid(), ...SourceFields },
  { additionalProperties: false, examples: [
    {
      kind: 'assignment',
      connection_id: '3f1c2a9e-8b4d-4c6a-9e2f-5d7b1a0c4e81',
      name: 'Checkout exposures',
      table: 'events.experiment_exposures',
      columns: { unit_id: 'user_id', variant: 'variant_label', exposed_at: 'exposed_at' },
      filters: [{ column: 'experiment_key', operator: 'eq', value: 'checkout-redesign' }],
    },
    {
      kind: 'metric',
      connection_id: '3f1c2a9e-8b4d-4c6a-9e2f-5d7b1a0c4e81',
      name: 'Order revenue',
      table: 'events.orders',
      columns: { unit_id: 'user_id', event_at: 'ordered_at', value: 'amount_eur' },
      metric_type: 'mean',
      conversion_window_hours: 168,
      cap_value: 500,
    },
  ] },
);
export type SourceCreate = Static<typeof SourceCreate>;

export const SourceUpdate = Type.Object(
  {
    name: Type.Optional(SourceFields.name),
    table: Type.Optional(SourceFields.table),
    columns: Type.Optional(SourceColumns),
    metric_type: Type.Optional(Nullable(StringEnum(['proportion', 'mean'], { description: 'null as a GET shows it for an assignment source' }))),
    conversion_window_hours: SourceFields.conversion_window_hours,
    filters: SourceFields.filters,
    cap_value: SourceFields.cap_value,
    kind: Type.Optional(StringEnum(['assignment', 'metric'], { description: 'Cannot change: accepted when it is the stored value' })),
    connection_id: Type.Optional(Uuid({ description: 'Cannot change: accepted when it is the stored value' })),
    validated_at: Type.Optional(Nullable(DateTime({ description: 'Set by the server; ignored (any edit clears validation)' }))),
    validation_errors: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 100, description: 'Set by the server; ignored' })),
    ...ReadBack,
  },
  { additionalProperties: false, examples: [
    { conversion_window_hours: 72, cap_value: 250 },
    { table: 'events.orders_v2', filters: [{ column: 'country', operator: 'eq', value: 'DE' }] },
  ] },
);
export type SourceUpdate = Static<typeof SourceUpdate>;

export const SourceView = Type.Object({
  id: Uuid(),
  kind: StringEnum(['assignment', 'metric']),
  connection_id: Uuid(),
  name: Type.String(),
  table: Type.String(),
  columns: Type.Record(Type.String(), Type.String()),
  metric_type: Nullable(StringEnum(['proportion', 'mean'])),
  conversion_window_hours: Nullable(Type.Integer()),
  filters: Type.Array(Filter),
  cap_value: Nullable(Type.Number()),
  validated_at: Nullable(DateTime()),
  validation_errors: Type.Array(Type.String()),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export type SourceView = Static<typeof SourceView>;

export const ValidationResult = Type.Object({ valid: Type.Boolean(), errors: Type.Array(Type.String()) });

export const PreviewBody = Type.Object(
  { window_start: Type.Optional(WindowTime), window_end: Type.Optional(WindowTime) },
  { additionalProperties: false, examples: [{}, { window_start: '2026-01-01T00:00:00Z', window_end: '2026-01-08T00:00:00Z' }] },
);
export type PreviewBody = Static<typeof PreviewBody>;

const DefinitionMetric = Type.Object(
  {
    metric_definition_id: Uuid(),
    source_id: Uuid({ description: 'A validated metric source whose columns map event_name (and value for sum aggregates)' }),
  },
  { additionalProperties: false },
);

export const RunCreate = Type.Object(
  {
    connection_id: Uuid(),
    assignment_source_id: Uuid(),
    metric_source_ids: Type.Array(Uuid(), {
      maxItems: 10, uniqueItems: true, description: 'At most 10 metrics with metric_definitions, and at least one metric in all',
    }),
    metric_definitions: Type.Optional(Type.Array(DefinitionMetric, {
      maxItems: 10, description: 'Metric library definitions analysed per the definition, each on the events of a metric source',
    })),
    window_start: Type.Optional(WindowTime),
    window_end: Type.Optional(WindowTime),
    variant_map: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Uuid(), { maxProperties: 51 })),
  },
  { additionalProperties: false, examples: [
    {
      connection_id: '3f1c2a9e-8b4d-4c6a-9e2f-5d7b1a0c4e81',
      assignment_source_id: '9a0b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
      metric_source_ids: ['c4d3e2f1-a0b9-4c8d-9e7f-6a5b4c3d2e1f'],
      window_start: '2026-01-01T00:00:00Z',
      window_end: '2026-01-15T00:00:00Z',
      variant_map: { control: '0e1d2c3b-4a59-4687-9a8b-7c6d5e4f3a2b', treatment: '5f4e3d2c-1b0a-4998-8877-665544332211' },
    },
    {
      connection_id: '3f1c2a9e-8b4d-4c6a-9e2f-5d7b1a0c4e81',
      assignment_source_id: '9a0b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
      metric_source_ids: [],
      metric_definitions: [{ metric_definition_id: '7b6a5f4e-3d2c-4b1a-9f8e-7d6c5b4a3f2e', source_id: 'c4d3e2f1-a0b9-4c8d-9e7f-6a5b4c3d2e1f' }],
    },
  ] },
);
export type RunCreate = Static<typeof RunCreate>;

export const VariantResult = Type.Object({
  label: Nullable(Type.String()),
  variant_id: Nullable(Uuid()),
  units: Type.Integer(),
  conversions: Type.Optional(Type.Integer()),
  mean: Type.Optional(Type.Number()),
  ci_lower: Type.Optional(Type.Number()),
  ci_upper: Type.Optional(Type.Number()),
  p_value: Type.Optional(Type.Number()),
  note: Type.Optional(Type.String()),
});
export type VariantResult = Static<typeof VariantResult>;

export const MetricResult = Type.Object({
  metric_source_id: Uuid(),
  metric_type: StringEnum(['proportion', 'mean']),
  variants: Type.Array(VariantResult),
});
export type MetricResult = Static<typeof MetricResult>;

export const DefinitionMetricResult = Type.Object({
  metric_definition_id: Uuid(),
  metric_source_id: Uuid(),
  test: AnalysisMetricResult.properties.test,
  variants: Type.Array(Type.Object({ ...AnalysisVariantResult.properties, label: Nullable(Type.String({ description: 'The labels pooled into the variant' })) })),
  unmatched_labels: Type.Array(Type.String(), { description: 'Labels of no variant of the experiment (not analysed)' }),
  definition: DefinitionResult,
}, { description: 'A metric library definition analysed on warehouse aggregates, as the in-database results analyse it (docs/statistics.md)' });
export type DefinitionMetricResult = Static<typeof DefinitionMetricResult>;

export const PreviewCounts = Type.Object({
  rows: Type.Integer(),
  units: Type.Integer(),
  units_per_label: Type.Record(Type.String(), Type.Integer()),
  earliest: Nullable(DateTime()),
  latest: Nullable(DateTime()),
});
export type PreviewCounts = Static<typeof PreviewCounts>;

export const RunView = Type.Object({
  id: Uuid(),
  experiment_id: Nullable(Uuid()),
  kind: StringEnum(['analysis', 'preview']),
  status: StringEnum(['queued', 'running', 'succeeded', 'failed']),
  connection_id: Uuid(),
  connection_name: Type.String(),
  window_start: DateTime(),
  window_end: DateTime(),
  created_at: DateTime(),
  started_at: Nullable(DateTime()),
  finished_at: Nullable(DateTime()),
  error_code: Nullable(Type.String()),
  error_message: Nullable(Type.String()),
  results: Nullable(Type.Array(MetricResult)),
  definition_results: Nullable(Type.Array(DefinitionMetricResult, { description: 'The metric_definitions of an analysis; null before it succeeds and for previews' })),
  srm: Nullable(JsonObject()),
  diagnostics: Nullable(JsonObject()),
  preview: Nullable(PreviewCounts),
  sql: Type.Array(Type.String()),
});
export type RunView = Static<typeof RunView>;

export const ConnectionParams = Type.Object({ connection_id: Uuid() });
export const SourceParams = Type.Object({ source_id: Uuid() });
export const RunParams = Type.Object({ run_id: Uuid() });
export const ExperimentParams = Type.Object({ experiment_id: Uuid() });
export const RunListQuery = Type.Object({
  skip: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
});
