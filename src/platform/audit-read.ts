import { and, desc, eq, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { auditLogs, type AuditLogRow } from '../db/schema/audit-logs.js';

/**
 * The audit entries of one entity, newest first (the change history of a flag, a segment, ...). With `actorId`
 * only that account's entries: callers apply the spec's audit access (DEVELOPER and VIEWER read only their own).
 */
export function listEntityHistory(
  db: Executor,
  entityType: string,
  entityId: string,
  actorId?: string,
  page: { skip: number; limit: number } = { skip: 0, limit: 100 },
): Promise<AuditLogRow[]> {
  const filters: SQL[] = [eq(auditLogs.entityType, entityType), eq(auditLogs.entityId, entityId)];
  if (actorId) filters.push(eq(auditLogs.actorId, actorId));
  return db
    .select()
    .from(auditLogs)
    .where(and(...filters))
    .orderBy(desc(auditLogs.createdAt), desc(auditLogs.id))
    .offset(page.skip)
    .limit(page.limit);
}
