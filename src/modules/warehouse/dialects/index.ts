import type { WarehouseType } from '../types.js';
import type { Dialect } from './base.js';
import { bigqueryDialect } from './bigquery.js';
import { clickhouseDialect } from './clickhouse.js';
import { databricksDialect } from './databricks.js';
import { duckdbDialect } from './duckdb.js';
import { postgresDialect } from './postgres.js';
import { redshiftDialect } from './redshift.js';
import { snowflakeDialect } from './snowflake.js';

export type { Dialect } from './base.js';

export const DIALECTS: Record<WarehouseType, Dialect> = {
  postgres: postgresDialect,
  redshift: redshiftDialect,
  duckdb: duckdbDialect,
  bigquery: bigqueryDialect,
  snowflake: snowflakeDialect,
  databricks: databricksDialect,
  clickhouse: clickhouseDialect,
};
