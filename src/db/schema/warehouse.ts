import { bigint, doublePrecision, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.js';

/** Warehouse analysis (full profile, beta): connections, sources and the durable run queue. Migrations 0011, 0020. */

export const warehouseConnections = pgTable('warehouse_connections', {
  id: uuid().primaryKey(),
  name: text().notNull(),
  warehouseType: text().notNull(),
  settings: jsonb().$type<Record<string, unknown>>().notNull(),
  /** null: dropped when the settings changed where or how the connection signs in (migration 0020). */
  encryptedCredentials: text(),
  queryTimeoutSeconds: integer().notNull(),
  maxRunsPerDay: integer().notNull(),
  bytesLimit: bigint({ mode: 'number' }),
  worstCaseBytesPerDay: bigint({ mode: 'number' }),
  worstCaseSecondsPerDay: bigint({ mode: 'number' }),
  createdById: uuid().references(() => users.id, { onDelete: 'set null' }),
  createdAt: timestamp({ withTimezone: true }).notNull(),
  updatedAt: timestamp({ withTimezone: true }).notNull(),
});
export type WarehouseConnectionRow = typeof warehouseConnections.$inferSelect;

export interface StoredFilter {
  column: string;
  operator: 'eq';
  value: string | number | boolean;
}

export const warehouseSources = pgTable(
  'warehouse_sources',
  {
    id: uuid().primaryKey(),
    connectionId: uuid().notNull().references(() => warehouseConnections.id, { onDelete: 'restrict' }),
    kind: text().$type<'assignment' | 'metric'>().notNull(),
    name: text().notNull(),
    tableName: text().notNull(),
    columns: jsonb().$type<Record<string, string>>().notNull(),
    metricType: text().$type<'proportion' | 'mean'>(),
    conversionWindowHours: integer(),
    filters: jsonb().$type<StoredFilter[]>().notNull(),
    capValue: doublePrecision(),
    validatedAt: timestamp({ withTimezone: true }),
    validationErrors: jsonb().$type<string[]>().notNull(),
    createdById: uuid().references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp({ withTimezone: true }).notNull(),
    updatedAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [index('warehouse_sources_connection_idx').on(t.connectionId)],
);
export type WarehouseSourceRow = typeof warehouseSources.$inferSelect;

export type WarehouseRunStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export const warehouseRuns = pgTable('warehouse_runs', {
  id: uuid().primaryKey(),
  kind: text().$type<'analysis' | 'preview'>().notNull(),
  experimentId: uuid(),
  connectionId: uuid().notNull(),
  connectionName: text().notNull(),
  definition: jsonb().$type<Record<string, unknown>>().notNull(),
  status: text().$type<WarehouseRunStatus>().notNull(),
  leaseExpiresAt: timestamp({ withTimezone: true }),
  errorCode: text(),
  errorMessage: text(),
  results: jsonb().$type<unknown[]>(),
  srm: jsonb().$type<Record<string, unknown>>(),
  diagnostics: jsonb().$type<Record<string, unknown>>(),
  preview: jsonb().$type<Record<string, unknown>>(),
  sql: jsonb().$type<string[]>().notNull(),
  createdById: uuid().references(() => users.id, { onDelete: 'set null' }),
  createdAt: timestamp({ withTimezone: true }).notNull(),
  startedAt: timestamp({ withTimezone: true }),
  finishedAt: timestamp({ withTimezone: true }),
});
export type WarehouseRunRow = typeof warehouseRuns.$inferSelect;

export const warehouseRunSlots = pgTable('warehouse_run_slots', {
  slot: integer().primaryKey(),
  runId: uuid(),
});
