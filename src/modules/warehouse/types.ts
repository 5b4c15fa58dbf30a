/** Warehouse type identifiers (issue 16 conventions: exact). */
export const WAREHOUSE_TYPES = ['postgres', 'duckdb', 'bigquery', 'snowflake', 'redshift', 'databricks', 'clickhouse'] as const;
export type WarehouseType = (typeof WAREHOUSE_TYPES)[number];

/** A fully qualified table split into its parts (schema.table, project.dataset.table, ...). */
export type TableRef = readonly string[];

export type ParamType = 'timestamp' | 'text' | 'integer' | 'float' | 'boolean';

/** A value bound to a statement; never spliced into its text. */
export interface BoundParam {
  type: ParamType;
  value: string | number | boolean | Date;
}

/** One generated statement: text with dialect placeholders plus the values they bind, in placeholder order. */
export interface Statement {
  text: string;
  params: BoundParam[];
}
