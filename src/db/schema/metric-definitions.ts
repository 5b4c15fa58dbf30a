import { boolean, doublePrecision, integer, json, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.js';

export const METRIC_KINDS = ['proportion', 'mean', 'ratio', 'quantile'] as const;
export type MetricKind = (typeof METRIC_KINDS)[number];
export const METRIC_AGGREGATES = ['count', 'sum'] as const;
export type MetricAggregate = (typeof METRIC_AGGREGATES)[number];
export const CAPPING_TYPES = ['none', 'absolute', 'percentile'] as const;

export interface MetricEventAggregate {
  event_name: string;
  aggregate: MetricAggregate;
}
export type MetricCapping = { type: 'none' } | { type: 'absolute'; value: number } | { type: 'percentile'; p: number };

/** The metric library (migration 0032); `version` counts edits so an analysis can say which definition it used. */
export const metricDefinitions = pgTable(
  'metric_definitions',
  {
    id: uuid().primaryKey(),
    name: text().notNull(),
    description: text(),
    kind: text().$type<MetricKind>().notNull(),
    eventName: text(),
    aggregate: text().$type<MetricAggregate>(),
    numerator: json().$type<MetricEventAggregate>(),
    denominator: json().$type<MetricEventAggregate>(),
    quantile: doublePrecision(),
    capping: json().$type<MetricCapping>().notNull(),
    higherIsBetter: boolean().notNull().default(true),
    tags: text().array().notNull().default([]),
    owner: text(),
    createdBy: uuid().references(() => users.id, { onDelete: 'set null' }),
    version: integer().notNull().default(1),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('metric_definitions_name_key').on(t.name)],
);

export type MetricDefinitionRow = typeof metricDefinitions.$inferSelect;
