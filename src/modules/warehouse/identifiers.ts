import type { TableRef, WarehouseType } from './types.js';

/**
 * Identifier rules (issue 16): every part of a table name and every column matches
 * `^[A-Za-z_][A-Za-z0-9_$]{0,127}$`, stricter where the warehouse is. Only identifiers that pass are ever spliced
 * into SQL, and then quoted by the dialect; the rules leave no quote character a part could use to break out.
 */
interface IdentifierRule {
  pattern: RegExp;
  /** How many dot-separated parts a fully qualified table has here. */
  tableParts: number;
  tableForm: string;
}

const GENERAL = /^[A-Za-z_][A-Za-z0-9_$]{0,127}$/;
/** Postgres and Redshift truncate names beyond 63 bytes (NAMEDATALEN - 1): a longer name would name another table. */
const POSTGRES = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;
/** BigQuery, Databricks and ClickHouse names do not take `$`. */
const NO_DOLLAR = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export const IDENTIFIER_RULES: Record<WarehouseType, IdentifierRule> = {
  postgres: { pattern: POSTGRES, tableParts: 2, tableForm: 'schema.table' },
  redshift: { pattern: POSTGRES, tableParts: 2, tableForm: 'schema.table' },
  duckdb: { pattern: GENERAL, tableParts: 2, tableForm: 'schema.table' },
  bigquery: { pattern: NO_DOLLAR, tableParts: 3, tableForm: 'project.dataset.table' },
  snowflake: { pattern: GENERAL, tableParts: 3, tableForm: 'database.schema.table' },
  databricks: { pattern: NO_DOLLAR, tableParts: 3, tableForm: 'database.schema.table' },
  clickhouse: { pattern: NO_DOLLAR, tableParts: 2, tableForm: 'database.table' },
};

export function isIdentifier(type: WarehouseType, name: string): boolean {
  return IDENTIFIER_RULES[type].pattern.test(name);
}

/** The parts of a fully qualified table name, or undefined when it breaks the warehouse's rules. */
export function parseTable(type: WarehouseType, table: string): TableRef | undefined {
  const parts = table.split('.');
  const rule = IDENTIFIER_RULES[type];
  if (parts.length !== rule.tableParts || !parts.every((p) => rule.pattern.test(p))) return undefined;
  return parts;
}

/** Spec: a filter's text value may contain only letters, digits, spaces and `_ . : @ / + -`. */
export const FILTER_TEXT = /^[\p{L}\p{N} _.:@/+-]*$/u;
