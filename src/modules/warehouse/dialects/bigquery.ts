import { createDialect } from './base.js';

/** BigQuery standard SQL: backquoted parts, named @parameters typed by the client, TIMESTAMP_ADD. */
export const bigqueryDialect = createDialect({
  quote: (identifier) => `\`${identifier}\``,
  param: (index) => `@p${index}`,
  timestamp: (placeholder) => placeholder,
  addHours: (expr, hours) => `TIMESTAMP_ADD(${expr}, INTERVAL ${hours} HOUR)`,
  toText: (expr) => `CAST(${expr} AS STRING)`,
  toFloat: (expr) => `CAST(${expr} AS FLOAT64)`,
  prefix: (expr, length) => `SUBSTR(${expr}, 1, ${length})`,
  // PERCENTILE_CONT is an analytic function only in BigQuery (APPROX_QUANTILES is approximate).
  percentile: null,
  percentileOver: (expr, p, partition) => `PERCENTILE_CONT(${expr}, ${p}) OVER (${partition ? `PARTITION BY ${partition}` : ''})`,
});
