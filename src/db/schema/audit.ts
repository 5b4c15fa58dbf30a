import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

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
