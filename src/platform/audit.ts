import { randomUUID } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { Database, Executor } from '../db/client.js';
import { auditLogs, auditLogUnsealed, type AuditLogRow } from '../db/schema/audit-logs.js';
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
  /**
   * The Postgres channel this writer notifies from inside the writing transaction. Postgres delivers the notification
   * only when that transaction commits (never on rollback), so a listener on it learns of committed entries only:
   * the audit-log module seals them and streams them live (see `watchCommits`).
   */
  readonly commitChannel: string;
}

export const SYSTEM_ACTOR: AuditActor = { id: null, username: 'system' };

export function createAuditLog(deps: { clock: Clock }): AuditLog {
  // One channel per writer (per app), so only the process that wrote an entry reacts to its commit.
  const commitChannel = `uplift_audit_${randomUUID().replace(/-/g, '')}`;
  return {
    commitChannel,
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
      // Queued for sealing in the same transaction, so a committed entry is never left out of the chain.
      await db.execute(
        sql`WITH queued AS (INSERT INTO ${auditLogUnsealed} (audit_log_id) VALUES (${row.id}) RETURNING 1)
            SELECT pg_notify(${commitChannel}, '') FROM queued`,
      );
      return row;
    },
  };
}

const RECONNECT_MS = 1_000;

/**
 * Calls `onCommit` whenever a transaction that recorded audit entries through `audit` commits, and once when
 * listening starts (entries committed while nobody listened). Embedded PGlite delivers notifications on its own
 * client; PostgreSQL needs a dedicated LISTEN connection, re-opened when it drops. Returns the stop function.
 */
export async function watchCommits(database: Database, audit: AuditLog, onCommit: () => void): Promise<() => Promise<void>> {
  if (database.kind === 'pglite') {
    // Drizzle exposes the PGlite instance it wraps; the Database interface has no listen of its own.
    const client = (database.db as unknown as { $client: PGlite }).$client;
    const unlisten = await client.listen(audit.commitChannel, () => onCommit());
    onCommit();
    // The database may already be closed when the app shuts down; there is nothing left to stop then.
    return () => unlisten().catch(() => undefined);
  }
  const connectionString = database.connectionString;
  if (!connectionString) throw new Error('A PostgreSQL database without a connection string cannot LISTEN');
  let stopped = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString });
    const reconnect = () => {
      if (stopped || current !== client) return;
      current = undefined;
      client.end().catch(() => undefined);
      retry = setTimeout(() => void connect(), RECONNECT_MS);
      retry.unref();
    };
    current = client;
    client.on('notification', () => onCommit());
    client.on('error', reconnect);
    client.on('end', reconnect);
    try {
      await client.connect();
      await client.query(`LISTEN ${audit.commitChannel}`);
      onCommit();
    } catch {
      reconnect();
    }
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await current?.end().catch(() => undefined);
  };
}
