import { createDialect } from './base.js';

/** Databricks SQL: backquoted parts, named :parameters, TIMESTAMPADD. */
export const databricksDialect = createDialect({
  quote: (identifier) => `\`${identifier}\``,
  param: (index) => `:p${index}`,
  timestamp: (placeholder) => `CAST(${placeholder} AS TIMESTAMP)`,
  addHours: (expr, hours) => `TIMESTAMPADD(HOUR, ${hours}, ${expr})`,
  toText: (expr) => `CAST(${expr} AS STRING)`,
  toFloat: (expr) => `CAST(${expr} AS DOUBLE)`,
});
