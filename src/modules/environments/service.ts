import type { Db, Executor } from '../../db/client.js';
import type { EnvironmentRow } from '../../db/schema/environments.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { AuditActor, AuditLog } from '../../platform/audit.js';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict, NotFound, Unprocessable, type Loc } from '../../platform/errors.js';
import type { EnvironmentCreate, EnvironmentUpdate, EnvironmentView } from './schemas.js';
import * as store from './store.js';

export const MAX_ENVIRONMENTS = 20;
export const ENVIRONMENT_NOT_FOUND = 'Environment not found';
export const ENVIRONMENT_KEY_TAKEN = 'An environment with this key already exists';
export const TOO_MANY_ENVIRONMENTS = `At most ${MAX_ENVIRONMENTS} environments: delete one before creating another`;
export const DEFAULT_NOT_DELETABLE = 'This is the default environment: make another environment the default before deleting it';
export const DEFAULT_NOT_UNSET = 'There is always one default environment: make another environment the default instead';
export const keysStillBelong = (count: number) =>
  `${count} API key${count === 1 ? '' : 's'} still belong${count === 1 ? 's' : ''} to this environment: delete ${count === 1 ? 'it' : 'them'} before deleting the environment`;

/** Announced after every environment write: the cached list, and compiled rulesets of the environment, are dropped. */
export const ENVIRONMENTS_CHANGED = 'environments.changed';
/** Safety net for a lost cross-process invalidation; writes in this process invalidate at once. */
const LIST_MAX_AGE_MS = 30_000;

export function toEnvironmentView(row: EnvironmentRow): EnvironmentView {
  return {
    key: row.key,
    name: row.name,
    description: row.description,
    color: row.color,
    sort_order: row.sortOrder,
    is_default: row.isDefault,
    created_at: row.createdAt.toISOString(),
  };
}

function snapshotOf(row: EnvironmentRow): Record<string, unknown> {
  const { created_at: _created, ...fields } = toEnvironmentView(row);
  return fields;
}

export interface EnvironmentsDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  bus: Bus;
  /** The flags module's part of creating an environment: every flag's state there, off or copied from `copyFrom`. */
  flagStates: { seedEnvironment(tx: Executor, environment: string, copyFrom: string | undefined): Promise<number> };
  /** How many API keys belong to the environment (the api-keys module's read model). */
  keysInEnvironment(tx: Executor, environment: string): Promise<number>;
}

export type EnvironmentsService = ReturnType<typeof createEnvironmentsService>;

/**
 * Environments. Every flag has one state per environment; every API key belongs to one. The list (at most 20 rows) is
 * held in memory so the hot paths learn the default environment and check an environment key without a query; any
 * environment write drops it in every process through the bus.
 */
export function createEnvironmentsService(deps: EnvironmentsDeps) {
  const { db, audit, clock } = deps;
  let cached: { at: number; rows: Promise<EnvironmentRow[]> } | undefined;
  const invalidate = () => void (cached = undefined);
  deps.bus.subscribe(ENVIRONMENTS_CHANGED, invalidate);

  function rows(): Promise<EnvironmentRow[]> {
    const now = clock.now().getTime();
    if (cached && now - cached.at <= LIST_MAX_AGE_MS) return cached.rows;
    const entry = { at: now, rows: store.listEnvironments(db) };
    cached = entry;
    entry.rows.catch(() => {
      if (cached === entry) cached = undefined;
    });
    return entry.rows;
  }

  async function changed(key: string): Promise<void> {
    invalidate();
    await deps.bus.publish(ENVIRONMENTS_CHANGED, key).catch(() => undefined);
  }

  const notFound = (loc?: Loc) =>
    new NotFound(loc ? [{ type: 'value_error', loc, msg: ENVIRONMENT_NOT_FOUND }] : ENVIRONMENT_NOT_FOUND);

  return {
    async list(): Promise<EnvironmentView[]> {
      return (await store.listEnvironments(db)).map(toEnvironmentView);
    },

    async get(key: string): Promise<EnvironmentView> {
      const row = await store.findEnvironment(db, key);
      if (!row) throw notFound();
      return toEnvironmentView(row);
    },

    /** Every environment's key, in list order (from memory). */
    async keys(): Promise<string[]> {
      return (await rows()).map((r) => r.key);
    },

    /** The default environment's key (from memory). */
    async defaultKey(): Promise<string> {
      const found = (await rows()).find((r) => r.isDefault);
      if (found) return found.key;
      // Only between a committed default move and the bus message: read it again.
      invalidate();
      const again = (await rows()).find((r) => r.isDefault);
      if (!again) throw new Error('No default environment');
      return again.key;
    },

    /**
     * The environment a request names, or the default one when it names none. An unknown key is 404 with `loc` (e.g.
     * query.environment), or a 422 at `loc` when `unprocessable` (a key named in a body).
     */
    async resolve(key: string | undefined, loc: Loc, unprocessable = false): Promise<string> {
      if (key === undefined) return this.defaultKey();
      let known = (await rows()).some((r) => r.key === key);
      if (!known) {
        invalidate();
        known = (await rows()).some((r) => r.key === key);
      }
      if (known) return key;
      if (unprocessable) throw new Unprocessable({ type: 'value_error', loc, msg: ENVIRONMENT_NOT_FOUND });
      throw notFound(loc);
    },

    async create(actor: AuditActor, body: EnvironmentCreate): Promise<EnvironmentView> {
      try {
        const row = await db.transaction(async (tx) => {
          await store.lockEnvironments(tx);
          if ((await store.countEnvironments(tx)) >= MAX_ENVIRONMENTS) throw new Conflict(TOO_MANY_ENVIRONMENTS);
          if (await store.findEnvironment(tx, body.key)) throw new Conflict(ENVIRONMENT_KEY_TAKEN);
          if (body.copy_from !== undefined && !(await store.findEnvironment(tx, body.copy_from))) {
            throw new Unprocessable({ type: 'value_error', loc: ['body', 'copy_from'], msg: ENVIRONMENT_NOT_FOUND });
          }
          if (body.is_default) await store.clearDefault(tx);
          const inserted = await store.insertEnvironment(tx, {
            key: body.key,
            name: body.name,
            description: body.description ?? null,
            color: body.color ?? null,
            sortOrder: body.sort_order ?? 0,
            isDefault: body.is_default ?? false,
            createdAt: clock.now(),
          });
          const flags = await deps.flagStates.seedEnvironment(tx, inserted.key, body.copy_from);
          await audit.record(tx, actor, {
            action: 'environment_create',
            entityType: 'environment',
            entityId: inserted.key,
            after: snapshotOf(inserted),
            details: { copy_from: body.copy_from ?? null, flags },
          });
          return inserted;
        });
        await changed(row.key);
        return toEnvironmentView(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw new Conflict(ENVIRONMENT_KEY_TAKEN);
        throw error;
      }
    },

    /** Making an environment the default clears the previous default in the same transaction. */
    async update(actor: AuditActor, key: string, body: EnvironmentUpdate): Promise<EnvironmentView> {
      const row = await db.transaction(async (tx) => {
        await store.lockEnvironments(tx);
        const current = await store.findEnvironment(tx, key);
        if (!current) throw notFound();
        if (body.is_default === false && current.isDefault) throw new Conflict(DEFAULT_NOT_UNSET);
        const values: Partial<EnvironmentRow> = {};
        if (body.name !== undefined) values.name = body.name;
        if (body.description !== undefined) values.description = body.description;
        if (body.color !== undefined) values.color = body.color;
        if (body.sort_order !== undefined) values.sortOrder = body.sort_order;
        if (body.is_default === true && !current.isDefault) {
          await store.clearDefault(tx);
          values.isDefault = true;
        }
        const before: Record<string, unknown> = {};
        const after: Record<string, unknown> = {};
        const wire = snapshotOf(current);
        const next = snapshotOf({ ...current, ...values });
        for (const field of Object.keys(next)) {
          if (JSON.stringify(wire[field]) === JSON.stringify(next[field])) continue;
          before[field] = wire[field];
          after[field] = next[field];
        }
        if (Object.keys(after).length === 0) return current;
        const updated = await store.updateEnvironment(tx, key, values);
        await audit.record(tx, actor, { action: 'environment_update', entityType: 'environment', entityId: key, before, after });
        return updated;
      });
      await changed(key);
      return toEnvironmentView(row);
    },

    /** Refused (409) for the default environment and for one API keys still belong to; flag states go with it. */
    async delete(actor: AuditActor, key: string): Promise<void> {
      await db.transaction(async (tx) => {
        await store.lockEnvironments(tx);
        const current = await store.findEnvironment(tx, key);
        if (!current) throw notFound();
        if (current.isDefault) throw new Conflict(DEFAULT_NOT_DELETABLE);
        const keys = await deps.keysInEnvironment(tx, key);
        if (keys > 0) throw new Conflict(keysStillBelong(keys));
        await store.deleteEnvironment(tx, key);
        await audit.record(tx, actor, { action: 'environment_delete', entityType: 'environment', entityId: key, before: snapshotOf(current) });
      });
      await changed(key);
    },
  };
}
