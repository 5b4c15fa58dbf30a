import { randomUUID } from 'node:crypto';
import type { Executor } from '../db/client.js';
import { auditLogs, type AuditLogRow } from '../db/schema/audit.js';
import type { Clock } from './clock.js';

export interface AuditActor {
  id: string | null;
  username: string | null;
}

export interface AuditEntry {
  action: string;
  entityType: string;
  entityId?: string | null;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  details?: Record<string, unknown> | null;
}

export interface AuditLog {
  /**
   * Writes an entry with the caller's executor. Pass the transaction that makes the change: when the entry cannot
   * be written the change rolls back with it (spec, user rule 6).
   */
  record(db: Executor, actor: AuditActor | null, entry: AuditEntry): Promise<AuditLogRow>;
}

export const SYSTEM_ACTOR: AuditActor = { id: null, username: 'system' };

export function createAuditLog(deps: { clock: Clock }): AuditLog {
  return {
    async record(db, actor, entry) {
      const [row] = await db
        .insert(auditLogs)
        .values({
          id: randomUUID(),
          actorId: actor?.id ?? null,
          actorUsername: actor?.username ?? null,
          action: entry.action,
          entityType: entry.entityType,
          entityId: entry.entityId ?? null,
          before: entry.before ?? null,
          after: entry.after ?? null,
          details: entry.details ?? null,
          createdAt: deps.clock.now(),
        })
        .returning();
      return row;
    },
  };
}
