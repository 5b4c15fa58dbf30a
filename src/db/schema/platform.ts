import { bigint, boolean, doublePrecision, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.js';

/**
 * Platform management: the signed audit chain, notification preferences and deliveries, LLM experiment outputs and
 * workspaces.
 */

/**
 * One row per sealed audit entry, in commit order. `sequence` is the stream's event id and the chain position; the
 * signature covers the entry and the previous signature (see modules/audit-logs/chain.ts). No foreign key: a deleted
 * audit entry must leave its seal behind so the gap is visible.
 */
export const auditLogSeals = pgTable(
  'audit_log_seals',
  {
    sequence: bigint({ mode: 'number' }).primaryKey(),
    auditLogId: uuid().notNull(),
    signature: text().notNull(),
    previousSignature: text(),
    sealedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('audit_log_seals_audit_log_id_key').on(t.auditLogId)],
);
export type AuditLogSealRow = typeof auditLogSeals.$inferSelect;

/** Audit entries written but not yet sealed; platform/audit.ts adds one in the writing transaction. */
export const auditLogUnsealed = pgTable('audit_log_unsealed', {
  auditLogId: uuid().primaryKey(),
  queuedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
});

export const notificationPreferences = pgTable('notification_preferences', {
  userId: uuid()
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  emailEnabled: boolean().notNull().default(false),
  /** null sends to the account's email address. */
  emailAddress: text(),
  chatWebhookEnabled: boolean().notNull().default(false),
  chatWebhookUrl: text(),
  events: jsonb().$type<string[]>().notNull().default([]),
  createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
});
export type NotificationPreferencesRow = typeof notificationPreferences.$inferSelect;

/** Every delivery attempt with its outcome. user_id has no foreign key: the log outlives accounts. */
export const notificationDeliveries = pgTable(
  'notification_deliveries',
  {
    id: uuid().primaryKey(),
    notificationId: uuid().notNull(),
    userId: uuid(),
    kind: text().notNull(),
    channel: text().notNull(),
    target: text().notNull(),
    attempt: integer().notNull(),
    status: text().notNull(),
    error: text(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('notification_deliveries_created_at_idx').on(t.createdAt), index('notification_deliveries_user_idx').on(t.userId, t.createdAt)],
);
export type NotificationDeliveryRow = typeof notificationDeliveries.$inferSelect;

/** Outputs of an LLM experiment's variants and their automatic evaluation. experiment_id names an experiment. */
export const llmOutputs = pgTable(
  'llm_outputs',
  {
    id: uuid().primaryKey(),
    experimentId: uuid().notNull(),
    variantName: text().notNull(),
    prompt: text(),
    output: text().notNull(),
    autoEvalScore: doublePrecision(),
    autoEvalError: text(),
    autoEvalReasoning: text(),
    judgedAt: timestamp({ withTimezone: true }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('llm_outputs_experiment_idx').on(t.experimentId, t.variantName)],
);
export type LlmOutputRow = typeof llmOutputs.$inferSelect;

/** Workspaces; the migration creates the default one, whose members are every account. */
export const workspaces = pgTable(
  'workspaces',
  {
    id: uuid().primaryKey(),
    name: text().notNull(),
    slug: text().notNull(),
    isDefault: boolean().notNull().default(false),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('workspaces_slug_key').on(t.slug)],
);
export type WorkspaceRow = typeof workspaces.$inferSelect;
