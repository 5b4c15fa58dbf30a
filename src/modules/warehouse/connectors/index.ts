import type { WarehouseType } from '../types.js';
import { bigqueryDriver } from './bigquery.js';
import { clickhouseDriver } from './clickhouse.js';
import { databricksDriver } from './databricks.js';
import { duckdbDriver } from './duckdb.js';
import { postgresDriver, redshiftDriver } from './postgres.js';
import { snowflakeDriver } from './snowflake.js';
import type { Driver } from './types.js';

export type { Driver } from './types.js';

/** One driver per warehouse type. Cloud drivers load their optional package on first use. */
export const DRIVERS: Record<WarehouseType, Driver> = {
  postgres: postgresDriver,
  duckdb: duckdbDriver,
  bigquery: bigqueryDriver,
  snowflake: snowflakeDriver,
  redshift: redshiftDriver,
  databricks: databricksDriver,
  clickhouse: clickhouseDriver,
};
