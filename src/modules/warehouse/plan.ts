import type { Dialect } from './dialects/index.js';
import type { BoundParam, ParamType, Statement, TableRef } from './types.js';

/**
 * One query plan for every warehouse: the statements of an analysis (one diagnostics statement plus one per
 * metric) and of a preview, built from source definitions and a window, rendered by a dialect. Pure: the same
 * input gives the same text, which the snapshot tests pin per dialect.
 *
 * Spec rules applied here: a unit's exposure is its first inside [window_start, window_end); units seen in more than
 * one variant are excluded (and counted by the diagnostics statement); an event counts when it is at or after the
 * exposure, before exposure + conversion_window_hours (no limit when unset) and before window_end; only aggregates
 * come back (at most MAX_LABELS + 1 rows, labels cut to LABEL_LENGTH characters).
 */

export const LABEL_LENGTH = 64;
export const MAX_LABELS = 51;

export interface Filter {
  column: string;
  value: string | number | boolean;
}

export interface AssignmentSourcePlan {
  table: TableRef;
  columns: { unit_id: string; variant: string; exposed_at: string };
  filters: Filter[];
}

export interface MetricSourcePlan {
  table: TableRef;
  columns: { unit_id: string; event_at: string; value?: string };
  filters: Filter[];
  metricType: 'proportion' | 'mean';
  conversionWindowHours: number | null;
  capValue: number | null;
}

export interface Window {
  start: Date;
  end: Date;
}

/** Collects bound values in placeholder order; each use of a value is its own placeholder (positional dialects). */
export class Binder {
  readonly params: BoundParam[] = [];
  constructor(private readonly dialect: Dialect) {}
  bind(type: ParamType, value: BoundParam['value']): string {
    this.params.push({ type, value });
    return this.dialect.param(this.params.length, type);
  }
}

function filterType(value: Filter['value']): ParamType {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'float';
  return 'text';
}

export function tableName(d: Dialect, table: TableRef): string {
  return table.map((part) => d.quote(part)).join('.');
}

/** `time_col >= start AND time_col < end AND filters...` for one source table. */
export function whereClause(d: Dialect, b: Binder, timeColumn: string, filters: Filter[], window: Window, notNull: string[]): string {
  const time = d.quote(timeColumn);
  const conditions = [
    `${time} >= ${d.timestamp(b.bind('timestamp', window.start))}`,
    `${time} < ${d.timestamp(b.bind('timestamp', window.end))}`,
    ...notNull.map((column) => `${d.quote(column)} IS NOT NULL`),
    ...filters.map((f) => `${d.quote(f.column)} = ${b.bind(filterType(f.value), f.value)}`),
  ];
  return conditions.join('\n    AND ');
}

export function exposuresCte(d: Dialect, b: Binder, a: AssignmentSourcePlan, window: Window): string {
  const { unit_id, variant, exposed_at } = a.columns;
  return `exposures AS (
  SELECT ${d.toText(d.quote(unit_id))} AS unit_id,
    ${d.prefix(d.toText(d.quote(variant)), LABEL_LENGTH)} AS label,
    ${d.quote(exposed_at)} AS exposed_at
  FROM ${tableName(d, a.table)}
  WHERE ${whereClause(d, b, exposed_at, a.filters, window, [unit_id, variant])}
)`;
}

/** The analysed units: first exposure in the window, units seen under more than one label left out. */
export const UNITS_CTE = `units AS (
  SELECT unit_id, MIN(label) AS label, MIN(exposed_at) AS exposed_at
  FROM exposures
  GROUP BY unit_id
  HAVING MIN(label) = MAX(label)
)`;

/** Diagnostics: units per label (first exposure, one variant only), units seen in several variants (label NULL). */
export function diagnosticsStatement(d: Dialect, a: AssignmentSourcePlan, window: Window): Statement {
  const b = new Binder(d);
  const text = `WITH ${exposuresCte(d, b, a, window)},
units AS (
  SELECT unit_id, MIN(label) AS label, MAX(label) AS max_label, MIN(exposed_at) AS exposed_at
  FROM exposures
  GROUP BY unit_id
)
SELECT CASE WHEN label = max_label THEN label END AS label,
  COUNT(*) AS units,
  MIN(exposed_at) AS earliest,
  MAX(exposed_at) AS latest
FROM units
GROUP BY CASE WHEN label = max_label THEN label END
ORDER BY 1
LIMIT ${MAX_LABELS + 2}`;
  return { text, params: b.params };
}

/**
 * One metric: per label the exposed units, the converting units and the sum and sum of squares of the per-unit
 * value (event values summed per unit, NULLs ignored and counted, 0 without events, capped when cap_value is set).
 * The join is on the unit alone and the time rules are conditional aggregates, which every dialect runs as a plain
 * equi-join (ClickHouse refuses most inequality joins).
 */
export function metricStatement(d: Dialect, a: AssignmentSourcePlan, m: MetricSourcePlan, window: Window): Statement {
  const b = new Binder(d);
  const exposures = exposuresCte(d, b, a, window);
  const { unit_id, event_at, value } = m.columns;
  const isMean = m.metricType === 'mean' && value !== undefined;
  const eventWhere = whereClause(d, b, event_at, m.filters, window, [unit_id]);
  const inWindow = [
    'e.event_at >= u.exposed_at',
    ...(m.conversionWindowHours !== null ? [`e.event_at < ${d.addHours('u.exposed_at', b.bind('integer', m.conversionWindowHours))}`] : []),
  ].join(' AND ');
  const valueColumn = isMean ? `,\n    ${d.toFloat(d.quote(value))} AS value` : '';
  const perUnitValue = isMean
    ? `,
    SUM(CASE WHEN ${inWindow} THEN e.value END) AS total,
    SUM(CASE WHEN ${inWindow} AND e.value IS NULL THEN 1 ELSE 0 END) AS null_values`
    : '';
  const capped = isMean
    ? m.capValue !== null
      ? `LEAST(COALESCE(total, 0), ${b.bind('float', m.capValue)})`
      : 'COALESCE(total, 0)'
    : '0';
  const text = `WITH ${exposures},
${UNITS_CTE},
events AS (
  SELECT ${d.toText(d.quote(unit_id))} AS unit_id,
    ${d.quote(event_at)} AS event_at${valueColumn}
  FROM ${tableName(d, m.table)}
  WHERE ${eventWhere}
),
per_unit AS (
  SELECT u.label AS label,
    SUM(CASE WHEN ${inWindow} THEN 1 ELSE 0 END) AS events${perUnitValue}
  FROM units u
  LEFT JOIN events e ON e.unit_id = u.unit_id
  GROUP BY u.unit_id, u.label
),
unit_values AS (
  SELECT label, events, ${isMean ? 'null_values' : '0 AS null_values'}, ${capped} AS v
  FROM per_unit
)
SELECT label,
  COUNT(*) AS units,
  SUM(CASE WHEN events > 0 THEN 1 ELSE 0 END) AS conversions,
  SUM(v) AS value_sum,
  SUM(v * v) AS value_sum_squares,
  SUM(null_values) AS null_values
FROM unit_values
GROUP BY label
ORDER BY label
LIMIT ${MAX_LABELS + 1}`;
  return { text, params: b.params };
}

export interface PreviewSourcePlan {
  table: TableRef;
  unitColumn: string;
  timeColumn: string;
  /** Assignment sources count units per variant label; metric sources have none. */
  labelColumn?: string;
  filters: Filter[];
}

/** Preview: rows, distinct units per label, earliest and latest time in the window. */
export function previewStatement(d: Dialect, s: PreviewSourcePlan, window: Window): Statement {
  const b = new Binder(d);
  const label = s.labelColumn ? d.prefix(d.toText(d.quote(s.labelColumn)), LABEL_LENGTH) : undefined;
  const text = `SELECT ${label ? `${label} AS label,\n  ` : ''}COUNT(*) AS row_count,
  COUNT(DISTINCT ${d.quote(s.unitColumn)}) AS units,
  MIN(${d.quote(s.timeColumn)}) AS earliest,
  MAX(${d.quote(s.timeColumn)}) AS latest
FROM ${tableName(d, s.table)}
WHERE ${whereClause(d, b, s.timeColumn, s.filters, window, [])}${label ? `\nGROUP BY ${label}\nORDER BY 1\nLIMIT ${MAX_LABELS + 1}` : ''}`;
  return { text, params: b.params };
}

/** Spec rule 5: where the warehouse bills by bytes, only a single SELECT may run. Generated text always is one. */
export function isSingleSelect(text: string): boolean {
  const trimmed = text.trim();
  return /^(WITH|SELECT)\s/i.test(trimmed) && !trimmed.includes(';');
}
