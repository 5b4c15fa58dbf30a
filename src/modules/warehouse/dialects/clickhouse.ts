import type { ParamType } from '../types.js';
import { createDialect } from './base.js';

const CLICKHOUSE_TYPES: Record<ParamType, string> = {
  timestamp: "DateTime64(3, 'UTC')",
  text: 'String',
  integer: 'Int64',
  float: 'Float64',
  boolean: 'Bool',
};

/** ClickHouse: typed server-side parameters ({p1:Type}), backquoted parts, character-wise substring. */
export const clickhouseDialect = createDialect({
  quote: (identifier) => `\`${identifier}\``,
  param: (index, type) => `{p${index}:${CLICKHOUSE_TYPES[type]}}`,
  timestamp: (placeholder) => placeholder,
  addHours: (expr, hours) => `${expr} + toIntervalHour(${hours})`,
  toText: (expr) => `toString(${expr})`,
  toFloat: (expr) => `toFloat64(${expr})`,
  prefix: (expr, length) => `substringUTF8(${expr}, 1, ${length})`,
  // Exact, interpolated as Excel's PERCENTILE.INC (type 7); quantile() and quantileExact() are not.
  percentile: (expr, p) => `quantileExactInclusive(${p})(${expr})`,
});
