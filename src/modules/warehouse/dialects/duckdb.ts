import { createDialect } from './base.js';

export const duckdbDialect = createDialect({
  addHours: (expr, hours) => `${expr} + to_hours(CAST(${hours} AS BIGINT))`,
  toFloat: (expr) => `CAST(${expr} AS DOUBLE)`,
});
