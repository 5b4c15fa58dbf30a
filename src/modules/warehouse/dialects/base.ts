import type { ParamType } from '../types.js';

/**
 * The SQL fragments that differ between warehouses. Each is a pure function from already quoted identifiers or
 * placeholders to text; request values never reach them (they are bound through `param`).
 */
export interface Dialect {
  /** Quotes one identifier part that already passed the identifier rules (so it holds no quote character). */
  quote(identifier: string): string;
  /** The placeholder of the `index`-th bound value (1-based). */
  param(index: number, type: ParamType): string;
  /** A bound instant compared with the warehouse's timestamp columns (sessions run in UTC). */
  timestamp(placeholder: string): string;
  /** `expr` plus a bound whole number of hours. */
  addHours(expr: string, hoursPlaceholder: string): string;
  toText(expr: string): string;
  toFloat(expr: string): string;
  /** The first `length` characters of a text expression. */
  prefix(expr: string, length: number): string;
  /**
   * The exact p-th percentile of `expr` by linear interpolation between order statistics (Hyndman & Fan type 7,
   * numpy's default, as src/stats/capping.ts computes it) as an aggregate; null where the warehouse has it only as an
   * analytic function (`percentileOver`). `p` is the text of a number literal in (0, 1).
   */
  percentile: ((expr: string, p: string) => string) | null;
  /** The same as an analytic function over `partition` (a column, or '' for every row); null where not needed. */
  percentileOver: ((expr: string, p: string, partition: string) => string) | null;
}

const doubleQuote = (identifier: string) => `"${identifier}"`;

/** Standard SQL as Postgres and DuckDB read it; other dialects override what differs. */
export const baseDialect: Dialect = {
  quote: doubleQuote,
  param: (index) => `$${index}`,
  timestamp: (placeholder) => `CAST(${placeholder} AS TIMESTAMPTZ)`,
  addHours: (expr, hours) => `${expr} + CAST(${hours} AS INTEGER) * INTERVAL '1 hour'`,
  toText: (expr) => `CAST(${expr} AS VARCHAR)`,
  toFloat: (expr) => `CAST(${expr} AS DOUBLE PRECISION)`,
  prefix: (expr, length) => `SUBSTRING(${expr}, 1, ${length})`,
  // The SQL standard's ordered-set aggregate: Postgres, DuckDB, Redshift, Snowflake and Databricks SQL.
  percentile: (expr, p) => `PERCENTILE_CONT(${p}) WITHIN GROUP (ORDER BY ${expr})`,
  percentileOver: null,
};

export function createDialect(overrides: Partial<Dialect>): Dialect {
  return { ...baseDialect, ...overrides };
}
