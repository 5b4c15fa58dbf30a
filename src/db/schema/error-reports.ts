import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { apiKeys } from './api-keys.js';
import { featureFlags } from './feature-flags.js';

export const ERROR_REPORT_SOURCES = ['sdk', 'client'] as const;
export type ErrorReportSource = (typeof ERROR_REPORT_SOURCES)[number];

/**
 * Error reports of client applications (spec, tracking rule 7). `counted` marks reports from a trusted source
 * (an `sdk:ruleset` key whose owner can change flags): only those count toward a flag's error rate and rollback.
 * Deleting a flag keeps its reports with flag_id null, as it keeps tagged events.
 */
export const errorReports = pgTable(
  'error_reports',
  {
    id: uuid().primaryKey(),
    flagId: uuid().references(() => featureFlags.id, { onDelete: 'set null' }),
    counted: boolean().notNull(),
    errorType: text().notNull(),
    message: text(),
    userId: text(),
    requestData: jsonb().$type<Record<string, unknown>>().notNull(),
    apiKeyId: uuid().references(() => apiKeys.id, { onDelete: 'set null' }),
    createdAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [
    index('error_reports_flag_idx').on(t.flagId, t.counted, t.createdAt),
    index('error_reports_created_at_idx').on(t.createdAt),
    index('error_reports_api_key_idx').on(t.apiKeyId).where(sql`api_key_id IS NOT NULL`),
  ],
);

export type ErrorReportRow = typeof errorReports.$inferSelect;
