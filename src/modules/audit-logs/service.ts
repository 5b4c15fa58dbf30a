import type { Database, Db } from '../../db/client.js';
import type { AuditLogRow } from '../../db/schema/audit-logs.js';
import { watchCommits, type AuditLog } from '../../platform/audit.js';
import { hasRole, type Actor } from '../../platform/auth.js';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { Forbidden, NOT_ENOUGH_PERMISSIONS } from '../../platform/errors.js';
import { signEntry, type ChainEntry } from './chain.js';
import type { AuditLogListQuery, AuditLogPage, AuditLogView, AuditStats } from './schemas.js';
import { ACCOUNTS_CHANGED } from '../users/service.js';
import * as store from './store.js';

/** The filter and sealed entry of the signed chain, as the compliance module reads them through this service. */
export type { EntryFilter, SealedEntry } from './store.js';

/** Bus channel carrying every sealed entry to every API process. */
const SEALED_CHANNEL = 'audit-logs.sealed';
const SEAL_BATCH = 500;
const REPLAY_BATCH = 500;
const DAY_MS = 86_400_000;

export interface StreamSink {
  send(sequence: number, entry: AuditLogView): void;
  fail(error: unknown): void;
  /** The caller's access ended (account deactivated, deleted or re-roled, or its token expired): close the stream. */
  end(): void;
}

/** setTimeout's longest delay; a longer wait is re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

interface SealedMessage {
  sequence: number;
  entry: AuditLogView;
}

export function toAuditLogView(row: AuditLogRow, sequence: number | null): AuditLogView {
  return {
    id: row.id,
    sequence,
    actor_id: row.actorId,
    actor_username: row.actorUsername,
    action: row.action,
    entity_type: row.entityType,
    entity_id: row.entityId,
    before: row.before,
    after: row.after,
    details: row.details,
    created_at: row.createdAt.toISOString(),
  };
}

export function toChainEntry(row: AuditLogRow, sequence: number, previousSignature: string | null): ChainEntry {
  return { ...row, sequence, previousSignature };
}

/** Spec, audit logs: ADMIN and ANALYST read every entry; DEVELOPER and VIEWER only the entries they wrote. */
export function readsAllEntries(actor: Actor): boolean {
  return hasRole(actor, 'ADMIN', 'ANALYST');
}

/** The actor filter a caller is held to; asking for another account's entries without the role is refused. */
function ownScope(actor: Actor, requestedActorId: string | undefined): string | undefined {
  if (readsAllEntries(actor)) return requestedActorId;
  if (requestedActorId && requestedActorId !== actor.id) throw new Forbidden(NOT_ENOUGH_PERMISSIONS);
  return actor.id;
}

function page(rows: store.EntryWithSequence[], total: number, skip: number, limit: number): AuditLogPage {
  return { items: rows.map((r) => toAuditLogView(r, r.sequence)), total, skip, limit };
}

export type AuditLogsService = ReturnType<typeof createAuditLogsService>;

export interface AuditLogsDeps {
  db: Db;
  database: Database;
  audit: AuditLog;
  bus: Bus;
  clock: Clock;
  signingKey: string;
  /** The account as it is now: undefined once deactivated or deleted. */
  loadActor(id: string): Promise<Actor | undefined>;
}

/**
 * Reading the audit log, sealing committed entries into the signed chain and streaming them live.
 *
 * Live entries flow: the writing transaction queues the entry and notifies this process's commit channel (delivered
 * by Postgres only on commit), the relay seals queued entries in commit order under an advisory lock, then publishes
 * each sealed entry on the bus, which reaches every API process (Redis pub/sub when configured). A stream sends an
 * entry with its sequence as event id and fills any gap from the table, so entries arrive once and in order.
 */
export function createAuditLogsService(deps: AuditLogsDeps) {
  const { db, bus } = deps;

  async function sealBatch(): Promise<SealedMessage[]> {
    return db.transaction(async (tx) => {
      await store.lockSealing(tx);
      const pending = await store.unsealedEntries(tx, SEAL_BATCH);
      if (pending.length === 0) {
        await store.dropOrphans(tx);
        return [];
      }
      const last = await store.lastSeal(tx);
      let sequence = last?.sequence ?? 0;
      let previous = last?.signature ?? null;
      const seals = pending.map((row) => {
        sequence += 1;
        const signature = signEntry(deps.signingKey, toChainEntry(row, sequence, previous));
        const seal = { sequence, auditLogId: row.id, signature, previousSignature: previous, sealedAt: deps.clock.now() };
        previous = signature;
        return seal;
      });
      await store.insertSeals(tx, seals);
      await store.dequeue(tx, pending.map((r) => r.id));
      return pending.map((row, i) => ({ sequence: seals[i].sequence, entry: toAuditLogView(row, seals[i].sequence) }));
    });
  }

  async function sealAll(): Promise<void> {
    for (;;) {
      const sealed = await sealBatch();
      for (const message of sealed) await bus.publish(SEALED_CHANNEL, JSON.stringify(message));
      if (sealed.length < SEAL_BATCH) return;
    }
  }

  // One sealing run at a time per process; calls during a run queue exactly one more run.
  let running: Promise<void> = Promise.resolve();
  let queued: Promise<void> | undefined;
  function sealPending(): Promise<void> {
    if (queued) return queued;
    const next = running.then(() => {
      queued = undefined;
      return sealAll();
    });
    queued = next;
    running = next.catch(() => undefined);
    return next;
  }

  return {
    sealPending,

    /** Seals this app's entries as their transactions commit; returns the stop function. */
    startRelay(onError: (error: unknown) => void): Promise<() => Promise<void>> {
      return watchCommits(deps.database, deps.audit, () => void sealPending().catch(onError));
    },

    async list(actor: Actor, query: AuditLogListQuery): Promise<AuditLogPage> {
      const filter: store.EntryFilter = {
        actorId: ownScope(actor, query.actor_id),
        action: query.action,
        entityType: query.entity_type,
        entityId: query.entity_id,
        from: query.start_time ? new Date(query.start_time) : undefined,
        to: query.end_time ? new Date(query.end_time) : undefined,
      };
      const { rows, total } = await store.listEntries(db, filter, query.skip, query.limit);
      return page(rows, total, query.skip, query.limit);
    },

    /** An entity's change history, newest first; DEVELOPER and VIEWER see only their own changes (flag history too). */
    async history(actor: Actor, entityType: string, entityId: string, skip: number, limit: number): Promise<AuditLogPage> {
      const { rows, total } = await store.listEntries(db, { entityType, entityId, actorId: ownScope(actor, undefined) }, skip, limit);
      return page(rows, total, skip, limit);
    },

    async userActivity(actor: Actor, userId: string, skip: number, limit: number): Promise<AuditLogPage> {
      const { rows, total } = await store.listEntries(db, { actorId: ownScope(actor, userId) }, skip, limit);
      return page(rows, total, skip, limit);
    },

    async stats(days: number): Promise<AuditStats> {
      const to = deps.clock.now();
      const from = new Date(to.getTime() - days * DAY_MS);
      const filter = { from, to };
      const [byAction, byType, actors, perDay] = await Promise.all([
        store.countBy(db, 'action', filter),
        store.countBy(db, 'entityType', filter),
        store.topActors(db, filter, 10),
        store.countPerDay(db, filter),
      ]);
      return {
        period_start: from.toISOString(),
        period_end: to.toISOString(),
        total_entries: byAction.reduce((sum, r) => sum + r.count, 0),
        by_action: byAction.map((r) => ({ action: r.key, count: r.count })),
        by_entity_type: byType.map((r) => ({ entity_type: r.key, count: r.count })),
        top_actors: actors.map((r) => ({ actor_id: r.actorId, actor_username: r.actorUsername, count: r.count })),
        per_day: perDay.map((r) => ({ date: r.day, count: r.count })),
      };
    },

    /**
     * Streams sealed entries the caller may read: those after `lastEventId` first (resume), then live ones. Returns
     * the function that ends the subscription. Failures go to `sink.fail`, after which nothing more is sent.
     */
    openStream(
      actor: Actor,
      options: { lastEventId?: number; action?: string; entityType?: string; expiresAt?: Date },
      sink: StreamSink,
    ): () => void {
      const filter: store.EntryFilter = { actorId: ownScope(actor, undefined), action: options.action, entityType: options.entityType };
      const visible = (entry: AuditLogView) =>
        (!filter.actorId || entry.actor_id === filter.actorId) &&
        (!filter.action || entry.action === filter.action) &&
        (!filter.entityType || entry.entity_type === filter.entityType);
      let cursor = 0;
      let closed = false;
      let expiryTimer: NodeJS.Timeout | undefined;
      let chain: Promise<void> = Promise.resolve();
      const stop = () => {
        closed = true;
        unsubscribe();
        stopWatching();
        clearTimeout(expiryTimer);
      };
      const enqueue = (step: () => Promise<void> | void) => {
        chain = chain
          .then(() => (closed ? undefined : step()))
          .catch((error: unknown) => {
            if (closed) return;
            stop();
            sink.fail(error);
          });
      };
      const expired = () => options.expiresAt !== undefined && deps.clock.now().getTime() >= options.expiresAt.getTime();
      const accessEnded = () => {
        stop();
        sink.end();
      };
      /** Nothing is sent past the caller's token expiry. */
      const send = (sequence: number, entry: AuditLogView) => {
        if (expired()) accessEnded();
        else sink.send(sequence, entry);
      };
      /** Sends every visible sealed entry in (cursor, upTo] from the table. */
      const catchUp = async (upTo: number) => {
        while (!closed && cursor < upTo) {
          const rows = await store.sealedBetween(db, cursor, upTo, filter, REPLAY_BATCH);
          for (const row of rows) if (!closed) send(row.sequence, toAuditLogView(row.entry, row.sequence));
          cursor = rows.length < REPLAY_BATCH ? upTo : rows[rows.length - 1].sequence;
        }
      };
      // Subscribe before reading the head, so nothing sealed in between is missed.
      const unsubscribe = bus.subscribe(SEALED_CHANNEL, (raw) => {
        enqueue(async () => {
          const message = JSON.parse(raw) as SealedMessage;
          if (message.sequence <= cursor) return;
          if (message.sequence === cursor + 1) {
            cursor = message.sequence;
            if (visible(message.entry)) send(message.sequence, message.entry);
            return;
          }
          await catchUp(message.sequence);
        });
      });
      // The caller is checked again on every change to its account (any process announces it on the bus): a
      // deactivated or deleted account, or one whose role changes what it may read, loses the stream.
      const stopWatching = bus.subscribe(ACCOUNTS_CHANGED, (userId) => {
        if (userId !== actor.id) return;
        enqueue(async () => {
          const now = await deps.loadActor(actor.id);
          if (!now || readsAllEntries(now) !== readsAllEntries(actor)) accessEnded();
        });
      });
      const armExpiry = () => {
        if (options.expiresAt === undefined || closed) return;
        const wait = Math.min(Math.max(0, options.expiresAt.getTime() - deps.clock.now().getTime()), MAX_TIMER_MS);
        expiryTimer = setTimeout(() => enqueue(() => (expired() ? accessEnded() : armExpiry())), wait);
        expiryTimer.unref();
      };
      enqueue(async () => {
        if (expired()) return accessEnded();
        armExpiry();
        const head = await store.headSequence(db);
        cursor = Math.min(options.lastEventId ?? head, head);
        await catchUp(head);
      });
      return stop;
    },

    /** Sealed entries for the compliance trail, newest first (sealing anything committed but not yet sealed). */
    async signedPage(filter: store.EntryFilter, offset: number, limit: number) {
      await sealPending();
      return store.sealedPage(db, filter, offset, limit);
    },

    /** Every sealed entry matching the filter in sequence order, a page at a time (reports, exports). */
    async forEachSigned(filter: store.EntryFilter, visit: (rows: store.SealedEntry[]) => void): Promise<void> {
      await sealPending();
      const head = await store.headSequence(db);
      let cursor = 0;
      while (cursor < head) {
        const rows = await store.sealedBetween(db, cursor, head, filter, REPLAY_BATCH);
        if (rows.length === 0) return;
        visit(rows);
        cursor = rows[rows.length - 1].sequence;
      }
    },
  };
}
