import type { DefinitionSettings, EventAggregate } from '../../analysis/types.js';
import { normalQuantile } from '../../stats/index.js';
import type { Dialect } from './dialects/index.js';
import { Binder, exposuresCte, tableName, UNITS_CTE, whereClause, type AssignmentSourcePlan, type Filter, type Window } from './plan.js';
import type { Statement } from './types.js';

/**
 * The statement of a metric library definition (issue 32) against the warehouse: the same units and time rules as
 * `metricStatement` (plan.ts), with the events of one table told apart by its event name column, and the
 * definition's sufficient statistics per experiment variant (`arm`, the variant's index) computed in SQL, so that
 * only aggregates leave the warehouse and src/analysis/definitions.ts compares them exactly as the in-database
 * results do:
 *   proportion, mean: users, users with a value above 0, the sum and sum of squares of the (capped) per-user values;
 *   ratio:            the same for the capped numerator x and the denominator y, and the sum of x·y;
 *   quantile:         per variant, over users with an event: n, the p-th quantile, and the order statistics X_(L),
 *                     X_(U) at the ranks of src/stats/quantile.ts (computed in SQL from n, p and z as there).
 * Capping: absolute is LEAST(x, value); percentile is the dialect's exact linear-interpolation percentile of every
 * analysed user's value pooled over the variants (zeros included), the method of src/stats/capping.ts.
 */

export interface EventSourcePlan {
  table: readonly string[];
  columns: { unit_id: string; event_at: string; event_name: string; value?: string };
  filters: Filter[];
  conversionWindowHours: number | null;
}

/** The label of each variant's units and the variant's index (its `arm`); labels of no variant are left out. */
export interface ArmLabel {
  label: string;
  arm: number;
}

/** What a definition reads per user, in the order of its statement's columns: ratio numerator and denominator, else the value. */
function aggregatesOf(d: DefinitionSettings): EventAggregate[] {
  return d.kind === 'ratio' ? [d.numerator!, d.denominator!] : [d.value!];
}

/** A number for the text of a statement: finite and validated by the caller (a definition's p or quantile). */
function literal(value: number): string {
  if (!Number.isFinite(value)) throw new Error('Not a finite number');
  return String(value);
}

export function definitionStatement(
  d: Dialect, a: AssignmentSourcePlan, s: EventSourcePlan, def: DefinitionSettings, arms: ArmLabel[], window: Window, confidenceLevel: number,
): Statement {
  const b = new Binder(d);
  const exposures = exposuresCte(d, b, a, window);
  const aggregates = aggregatesOf(def);
  const names = [...new Set(aggregates.map((x) => x.event_name))];
  const { unit_id, event_at, event_name, value } = s.columns;
  const eventWhere = whereClause(d, b, event_at, s.filters, window, [unit_id, event_name]);
  const nameIn = names.map((n) => `${d.toText(d.quote(event_name))} = ${b.bind('text', n)}`).join(' OR ');
  const inWindow = [
    'e.event_at >= u.exposed_at',
    ...(s.conversionWindowHours !== null ? [`e.event_at < ${d.addHours('u.exposed_at', b.bind('integer', s.conversionWindowHours))}`] : []),
  ].join(' AND ');
  const armCase = `CASE label ${arms.map((x) => `WHEN ${b.bind('text', x.label)} THEN ${x.arm}`).join(' ')} END`;
  const perAggregate = aggregates.map((x, i) => {
    const when = `${inWindow} AND e.event_name = ${b.bind('text', x.event_name)}`;
    const count = `SUM(CASE WHEN ${when} THEN 1 ELSE 0 END) AS c${i}`;
    return x.aggregate === 'count' ? count : `${count},\n    COALESCE(SUM(CASE WHEN ${when} THEN e.value END), 0) AS s${i}`;
  });
  const valueOf = (i: number) => (aggregates[i].aggregate === 'count' ? d.toFloat(`c${i}`) : `s${i}`);
  const common = `WITH ${exposures},
${UNITS_CTE},
arms AS (
  SELECT unit_id, exposed_at, ${armCase} AS arm
  FROM units
),
events AS (
  SELECT ${d.toText(d.quote(unit_id))} AS unit_id,
    ${d.quote(event_at)} AS event_at,
    ${d.toText(d.quote(event_name))} AS event_name${value ? `,\n    ${d.toFloat(d.quote(value))} AS value` : ''}
  FROM ${tableName(d, s.table)}
  WHERE ${eventWhere}
    AND (${nameIn})
),
per_unit AS (
  SELECT u.arm AS arm,
    ${perAggregate.join(',\n    ')}
  FROM arms u
  LEFT JOIN events e ON e.unit_id = u.unit_id
  WHERE u.arm IS NOT NULL
  GROUP BY u.unit_id, u.arm
)`;
  const text = def.kind === 'quantile'
    ? `${common},\n${quantileTail(d, b, def.quantile!, confidenceLevel, valueOf(0))}`
    : `${common},\n${sumsTail(d, b, def, valueOf(0), def.kind === 'ratio' ? valueOf(1) : null)}`;
  return { text, params: b.params };
}

/** proportion, mean and ratio: per arm the sums, after the cap (none for proportion). */
function sumsTail(d: Dialect, b: Binder, def: DefinitionSettings, x: string, y: string | null): string {
  const capping = def.kind === 'proportion' ? { type: 'none' as const } : def.capping;
  const vals = `vals AS (
  SELECT arm, ${x} AS x${y ? `, ${y} AS y` : ''}
  FROM per_unit
)`;
  let capCte = '';
  let cap = 'NULL';
  if (capping.type === 'absolute') cap = d.toFloat(b.bind('float', capping.value));
  if (capping.type === 'percentile') {
    const p = literal(capping.p);
    const pooled = d.percentile
      ? `SELECT ${d.percentile('x', p)} AS cap FROM vals`
      : `SELECT MAX(q) AS cap FROM (SELECT ${d.percentileOver!('x', p, '')} AS q FROM vals) pooled`;
    capCte = `,\npooled_cap AS (\n  ${pooled}\n)`;
    cap = 'c.cap';
  }
  const capped = capping.type === 'none'
    ? `capped AS (
  SELECT arm, x, x AS xc${y ? ', y' : ''}, 0 AS over_cap, ${d.toFloat('NULL')} AS cap
  FROM vals
)`
    : `capped AS (
  SELECT v.arm, v.x, LEAST(v.x, ${cap}) AS xc${y ? ', v.y' : ''}, CASE WHEN v.x > ${cap} THEN 1 ELSE 0 END AS over_cap, ${cap} AS cap
  FROM vals v${capping.type === 'percentile' ? '\n  CROSS JOIN pooled_cap c' : ''}
)`;
  return `${vals}${capCte},
${capped}
SELECT arm,
  COUNT(*) AS users,
  SUM(CASE WHEN x > 0 THEN 1 ELSE 0 END) AS with_events,
  SUM(over_cap) AS capped,
  MAX(cap) AS cap,
  SUM(xc) AS sum_x,
  SUM(xc * xc) AS sum_x2${y ? `,
  SUM(y) AS sum_y,
  SUM(y * y) AS sum_y2,
  SUM(xc * y) AS sum_xy` : ''}
FROM capped
GROUP BY arm
ORDER BY arm`;
}

/**
 * quantile: over the users with an event, per arm n, the quantile and the order statistics at the ranks
 * L = ⌊np − z√(np(1−p))⌋ and U = ⌈np + z√(np(1−p))⌉ (src/stats/quantile.ts; NULL when a rank falls outside 1..n).
 */
function quantileTail(d: Dialect, b: Binder, p: number, confidenceLevel: number, x: string): string {
  const z = normalQuantile(1 - (1 - confidenceLevel) / 2);
  const pText = literal(p);
  const n = d.toFloat('n');
  const P = () => d.toFloat(b.bind('float', p));
  const Z = () => d.toFloat(b.bind('float', z));
  const analytic = !d.percentile;
  return `vals AS (
  SELECT arm, ${x} AS x
  FROM per_unit
  WHERE c0 > 0
),
ranked AS (
  SELECT arm, x,
    row_number() OVER (PARTITION BY arm ORDER BY x) AS rk,
    COUNT(*) OVER (PARTITION BY arm) AS n${analytic ? `,\n    ${d.percentileOver!('x', pText, 'arm')} AS q` : ''}
  FROM vals
),
bounds AS (
  SELECT arm, x, rk, n,${analytic ? ' q,' : ''}
    floor(${n} * ${P()} - ${Z()} * sqrt(${n} * ${P()} * (1 - ${P()}))) AS lower_rank,
    ceil(${n} * ${P()} + ${Z()} * sqrt(${n} * ${P()} * (1 - ${P()}))) AS upper_rank
  FROM ranked
)
SELECT arm,
  MAX(n) AS users,
  ${analytic ? 'MAX(q)' : d.percentile!('x', pText)} AS quantile,
  MAX(CASE WHEN rk = lower_rank THEN x END) AS lower_value,
  MAX(CASE WHEN rk = upper_rank THEN x END) AS upper_value
FROM bounds
GROUP BY arm
ORDER BY arm`;
}
