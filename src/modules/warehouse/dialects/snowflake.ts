import { createDialect } from './base.js';

/** Snowflake: numbered binds (:1), TIMESTAMP_TZ and DATEADD. */
export const snowflakeDialect = createDialect({
  param: (index) => `:${index}`,
  timestamp: (placeholder) => `TO_TIMESTAMP_TZ(${placeholder})`,
  addHours: (expr, hours) => `DATEADD(hour, ${hours}, ${expr})`,
  toFloat: (expr) => `CAST(${expr} AS DOUBLE)`,
});
