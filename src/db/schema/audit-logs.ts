import { bigint, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/** Append-only change history. actor_id has no foreign key: entries outlive the accounts they name. */
export const auditLogs = pgTable(
  'audit_logs',
  {
    id: uuid().primaryKey(),
    actorId: uuid(),
    actorUsername: text(),
    action: text().notNull(),
    entityType: text().notNull(),
    entityId: text(),
    before: jsonb().$type<Record<string, unknown> | null>(),
    after: jsonb().$type<Record<string, unknown> | null>(),
    details: jsonb().$type<Record<string, unknown> | null>(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('audit_logs_entity_idx').on(t.entityType, t.entityId, t.createdAt),
    index('audit_logs_actor_idx').on(t.actorId, t.createdAt),
    index('audit_logs_created_at_idx').on(t.createdAt),
  ],
);

export type AuditLogRow = typeof auditLogs.$inferSelect;

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
