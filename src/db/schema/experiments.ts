import { boolean, doublePrecision, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { exactTimestamp } from './exact-timestamp.js';
import { users } from './users.js';

import type {
  BayesianConfig,
  BayesianDecision,
  CorrectionMethod,
  ExperimentStatus,
  ExperimentType,
  MetricType,
  SequentialTestingConfig,
  VarianceReductionConfig,
} from '../../modules/experiments/domain.js';
type JsonObject = Record<string, unknown>;

export const experiments = pgTable(
  'experiments',
  {
    id: uuid().primaryKey(),
    key: text().notNull(),
    name: text().notNull(),
    description: text(),
    hypothesis: text(),
    experimentType: text().$type<ExperimentType>().notNull().default('a_b'),
    status: text().$type<ExperimentStatus>().notNull().default('draft'),
    targetingRules: jsonb().$type<JsonObject>(),
    correctionMethod: text().$type<CorrectionMethod>().notNull().default('benjamini_hochberg'),
    confidenceLevel: doublePrecision().notNull().default(0.95),
    sequentialTestingEnabled: boolean().notNull().default(false),
    sequentialTestingConfig: jsonb().$type<SequentialTestingConfig>(),
    varianceReductionConfig: jsonb().$type<VarianceReductionConfig>(),
    bayesianEnabled: boolean().notNull().default(false),
    bayesianConfig: jsonb().$type<BayesianConfig>(),
    bayesianDecision: text().$type<BayesianDecision>(),
    splitUrlConfig: jsonb().$type<JsonObject>(),
    metadata: jsonb().$type<JsonObject>(),
    ownerId: uuid().references(() => users.id, { onDelete: 'set null' }),
    startDate: exactTimestamp(),
    endDate: exactTimestamp(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('experiments_key_key').on(t.key),
    index('experiments_status_idx').on(t.status),
    index('experiments_created_at_idx').on(t.createdAt),
  ],
);

/** Variants and metrics are listed by (created_at, id): the service gives rows of one request ascending ids. */
export const experimentVariants = pgTable(
  'experiment_variants',
  {
    id: uuid().primaryKey(),
    experimentId: uuid().notNull().references(() => experiments.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    description: text(),
    isControl: boolean().notNull().default(false),
    trafficAllocation: doublePrecision().notNull(),
    configuration: jsonb().$type<JsonObject>(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('experiment_variants_name_key').on(t.experimentId, t.name)],
);

export const experimentMetrics = pgTable(
  'experiment_metrics',
  {
    id: uuid().primaryKey(),
    experimentId: uuid().notNull().references(() => experiments.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    description: text(),
    eventName: text().notNull(),
    metricType: text().$type<MetricType>().notNull().default('conversion'),
    isPrimary: boolean().notNull().default(false),
    expectedEffect: doublePrecision(),
    /** The metric library definition this metric uses (migration 0032; cleared when the definition is deleted). */
    metricDefinitionId: uuid(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('experiment_metrics_experiment_idx').on(t.experimentId)],
);

export type ExperimentRow = typeof experiments.$inferSelect;
export type VariantRow = typeof experimentVariants.$inferSelect;
export type MetricRow = typeof experimentMetrics.$inferSelect;
