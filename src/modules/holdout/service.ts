import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { HoldoutRow } from '../../db/schema/holdout.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict, NotFound } from '../../platform/errors.js';
import { isInHoldout } from './membership.js';
import type { HoldoutCreate, HoldoutUpdate, HoldoutView } from './schemas.js';
import * as store from './store.js';
import { isUniqueViolation } from '../../db/errors.js';
import { fisherExactTwoSided } from '../../stats/index.js';

export const HOLDOUT_NOT_FOUND = 'Holdout not found';
export const ANOTHER_HOLDOUT_ACTIVE = 'Another global holdout is active; deactivate it first (PUT /api/v1/holdout/{id} with is_active false)';
/** Announced after every change, so each process reloads the active holdout it keeps in memory. */
export const HOLDOUT_CHANGED = 'holdout.changed';
export const RESULTS_NOTICE =
  'Beta: users seen through tracked events since the holdout began (at most 100,000, most recently active first) are split by holdout membership; per event, the share of held-out users who sent it is compared with everyone else by Fisher\'s exact test.';
/** Users read for one holdout analysis: enough for stable rates, bounded so the route cannot exhaust memory. */
export const RESULTS_USER_LIMIT = 100_000;
const RESULTS_EVENT_LIMIT = 20;

export function toHoldoutView(row: HoldoutRow): HoldoutView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    percentage: row.percentage,
    is_active: row.isActive,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export type HoldoutService = ReturnType<typeof createHoldoutService>;

export interface HoldoutDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  bus: Bus;
  /** Tracking's read model: users seen since a time (with their event names) and the count of assigned users. */
  tracking: {
    usersSeenSince(since: Date, limit: number): Promise<{ users: Array<{ userId: string; eventNames: string[] }>; assignedUsers: number }>;
  };
}

export function createHoldoutService(deps: HoldoutDeps) {
  const { db, audit, clock } = deps;

  /**
   * Every new assignment asks for the active holdout, so each process keeps it in memory; any change, here or in
   * another process, drops it through the bus.
   */
  let active: Promise<HoldoutRow | undefined> | undefined;
  const forget = () => {
    active = undefined;
  };
  deps.bus.subscribe(HOLDOUT_CHANGED, forget);
  function activeRow(): Promise<HoldoutRow | undefined> {
    active ??= store.findActiveHoldout(db).catch((error: unknown) => {
      forget();
      throw error;
    });
    return active;
  }

  /**
   * A change to holdouts, then announced. One is active at a time: the partial unique index allows one, so a
   * concurrent activation of a second loses with a unique violation (23505), answered 409 as any other.
   */
  async function change<T extends { id: string }>(write: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await write();
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(ANOTHER_HOLDOUT_ACTIVE);
      throw error;
    }
    forget();
    await deps.bus.publish(HOLDOUT_CHANGED, result.id).catch(() => undefined);
    return result;
  }

  async function mustFind(id: string): Promise<HoldoutRow> {
    const row = await store.findHoldout(db, id);
    if (!row) throw new NotFound(HOLDOUT_NOT_FOUND);
    return row;
  }

  return {
    /** The active holdout, or null: what tracking checks first for every new user (with isInHoldout). */
    async active(): Promise<HoldoutView | null> {
      const row = await activeRow();
      return row ? toHoldoutView(row) : null;
    },

    async list(): Promise<HoldoutView[]> {
      return (await store.listHoldouts(db)).map(toHoldoutView);
    },

    create: (actor: Actor, body: HoldoutCreate): Promise<HoldoutView> =>
      change(() =>
        db.transaction(async (tx) => {
          const isActive = body.is_active ?? true;
          if (isActive && (await store.findActiveHoldout(tx))) throw new Conflict(ANOTHER_HOLDOUT_ACTIVE);
          const now = clock.now();
          const row = await store.insertHoldout(tx, {
            id: randomUUID(),
            name: body.name,
            description: body.description ?? null,
            percentage: body.percentage,
            isActive,
            createdById: actor.id,
            createdAt: now,
            updatedAt: now,
          });
          await audit.record(tx, actor, {
            action: 'holdout_create',
            entityType: 'holdout',
            entityId: row.id,
            after: { name: row.name, percentage: row.percentage, is_active: row.isActive },
          });
          return toHoldoutView(row);
        }),
      ),

    update: (actor: Actor, id: string, body: HoldoutUpdate): Promise<HoldoutView> =>
      change(() =>
        db.transaction(async (tx) => {
          const row = await store.lockHoldout(tx, id);
          if (!row) throw new NotFound(HOLDOUT_NOT_FOUND);
          if (body.is_active && !row.isActive && (await store.findActiveHoldout(tx))) throw new Conflict(ANOTHER_HOLDOUT_ACTIVE);
          const next = await store.updateHoldout(tx, id, {
            name: body.name,
            description: body.description,
            percentage: body.percentage,
            isActive: body.is_active,
            updatedAt: clock.now(),
          });
          await audit.record(tx, actor, {
            action: 'holdout_update',
            entityType: 'holdout',
            entityId: id,
            before: { name: row.name, percentage: row.percentage, is_active: row.isActive },
            after: { name: next.name, percentage: next.percentage, is_active: next.isActive },
          });
          return toHoldoutView(next);
        }),
      ),

    /** Deterministic by hash: the same user is always in or always out of a given holdout. */
    async check(userId: string) {
      const row = await activeRow();
      return {
        user_id: userId,
        in_holdout: row ? isInHoldout(row, userId) : false,
        holdout_id: row?.id ?? null,
        percentage: row?.percentage ?? null,
      };
    },

    /**
     * Beta comparison of held-out users against everyone else, per event, from tracking's read model (RESULTS_NOTICE
     * says how; spec: analysis_notice when beta).
     */
    async results(id: string) {
      const holdout = toHoldoutView(await mustFind(id));
      const { users, assignedUsers } = await deps.tracking.usersSeenSince(new Date(holdout.created_at), RESULTS_USER_LIMIT);
      const held = users.filter((u) => isInHoldout(holdout, u.userId));
      const exposed = users.length - held.length;
      const senders = new Map<string, { held: number; exposed: number }>();
      for (const u of users) {
        const inHoldout = isInHoldout(holdout, u.userId);
        for (const name of u.eventNames) {
          const count = senders.get(name) ?? { held: 0, exposed: 0 };
          if (inHoldout) count.held++;
          else count.exposed++;
          senders.set(name, count);
        }
      }
      const metrics = [...senders.entries()]
        .sort((a, b) => b[1].held + b[1].exposed - (a[1].held + a[1].exposed) || a[0].localeCompare(b[0]))
        .slice(0, RESULTS_EVENT_LIMIT)
        .map(([eventName, c]) => {
          const heldRate = held.length ? c.held / held.length : null;
          const exposedRate = exposed ? c.exposed / exposed : null;
          return {
            event_name: eventName,
            holdout_users: held.length, holdout_converters: c.held, holdout_rate: heldRate,
            exposed_users: exposed, exposed_converters: c.exposed, exposed_rate: exposedRate,
            relative_lift: heldRate && exposedRate !== null ? (exposedRate - heldRate) / heldRate : null,
            p_value: held.length && exposed ? fisherExactTwoSided(c.held, held.length, c.exposed, exposed) : null,
          };
        });
      return {
        holdout,
        analysis_status: 'beta' as const,
        analysis_notice: RESULTS_NOTICE,
        users_in_holdout: held.length,
        users_in_experiments: assignedUsers,
        metrics,
      };
    },
  };
}
