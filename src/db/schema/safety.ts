import { boolean, doublePrecision, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { environments } from './environments.js';
import { featureFlags } from './feature-flags.js';

/** The one row of global safety settings (id is always 1); no row means every setting has its default. */
export const safetySettings = pgTable('safety_settings', {
  id: integer().primaryKey(),
  autoRollbackEnabled: boolean().notNull(),
  errorRateThreshold: doublePrecision().notNull(),
  windowMinutes: integer().notNull(),
  updatedAt: timestamp({ withTimezone: true }).notNull(),
});

/** Per-flag overrides of the global thresholds, kept in `metrics`. */
export interface SafetyMetrics {
  error_rate_threshold?: number;
  window_minutes?: number;
}

/**
 * Per-flag safety config. `last_rollback_at` starts a new error-rate window after a rollback, so the errors that
 * caused it do not trigger another one.
 */
export const safetyFlagConfigs = pgTable('safety_flag_configs', {
  flagId: uuid().primaryKey().references(() => featureFlags.id, { onDelete: 'cascade' }),
  enabled: boolean().notNull(),
  metrics: jsonb().$type<SafetyMetrics>().notNull(),
  rollbackPercentage: integer().notNull(),
  lastRollbackAt: timestamp({ withTimezone: true }),
  /** The environment whose rollout a rollback lowers (null: the default environment). */
  environment: text().references(() => environments.key, { onDelete: 'cascade' }),
  createdAt: timestamp({ withTimezone: true }).notNull(),
  updatedAt: timestamp({ withTimezone: true }).notNull(),
});

export type SafetySettingsRow = typeof safetySettings.$inferSelect;
export type SafetyFlagConfigRow = typeof safetyFlagConfigs.$inferSelect;
