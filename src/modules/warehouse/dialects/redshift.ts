import { createDialect } from './base.js';

/** Redshift: Postgres wire protocol, but TIMESTAMP columns and DATEADD instead of interval multiplication. */
export const redshiftDialect = createDialect({
  timestamp: (placeholder) => `CAST(${placeholder} AS TIMESTAMP)`,
  addHours: (expr, hours) => `DATEADD(hour, CAST(${hours} AS INTEGER), ${expr})`,
  toFloat: (expr) => `CAST(${expr} AS DOUBLE PRECISION)`,
});
