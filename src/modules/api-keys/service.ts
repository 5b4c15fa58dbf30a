import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { ApiKeyRow } from '../../db/schema/api-keys.js';
import type { AuditLog } from '../../platform/audit.js';
import { hasRole, type Actor, type KeyClient } from '../../platform/auth.js';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { localCache } from '../../platform/local-cache.js';
import { Forbidden, NOT_ENOUGH_PERMISSIONS, NotFound, Unprocessable, type Loc } from '../../platform/errors.js';
import { ACCOUNTS_CHANGED } from '../users/domain.js';
import type { ApiKeyCreate, ApiKeyView } from './schemas.js';
import * as store from './store.js';

/** Every key starts with this fixed five-character prefix, so leaked keys are easy to recognise and scan for. */
export const KEY_PREFIX = 'uplk_';
export const API_KEY_NOT_FOUND = 'API key not found';
export const EXPIRY_NOT_IN_FUTURE = 'The expiry must be in the future';
/** Published with the key's id when a key is deleted (open streams of the key close). */
import { KEYS_CHANGED } from './domain.js';
export { KEYS_CHANGED };
/** last_used_at is written at most this often per key: a key on every tracking call must not cost a write each. */
export const LAST_USED_WRITE_INTERVAL_MS = 60_000;
const CACHE_LIMIT = 10_000;
/** A resolved key is re-read at least this often, even if a bus message announcing its revocation was lost. */
const CACHE_TTL_MS = 60_000;

/** 32 random bytes (256 bits) in URL-safe base64 after the prefix. */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Keys carry 256 bits of entropy, so a fast hash is as safe as a slow one and keeps the lookup cheap. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

function toView(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    key_prefix: row.keyPrefix,
    scopes: row.scopes,
    user_id: row.userId,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt?.toISOString() ?? null,
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    environment: row.environment,
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;

/**
 * API keys authenticate every tracking and evaluation call, so resolved keys are held in memory (by the key as sent:
 * process memory already sees it on every request; it is never written anywhere). Any change to keys
 * or accounts (deletion, deactivation, role change) clears the cache in every process through the bus, so a
 * revoked key stops working at once. Unknown keys are not cached.
 */
export interface ApiKeysDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  bus: Bus;
  /** The owner's standing: undefined for an inactive or deleted account, whose keys do not authenticate. */
  users: { loadActor(id: string): Promise<Actor | undefined> };
  /**
   * Identity-provider mode: the owner's standing as the provider sees it (re-checked every IDP_REVALIDATE_SECONDS),
   * applied on every use of a key: undefined refuses the key; a ServiceUnavailable is the provider's outage.
   */
  revalidateOwner?: (client: KeyClient) => Promise<KeyClient | undefined>;
  /** The environment a new key names (absent: the default); unknown is 422 at body.environment. */
  environments: { resolve(key: string | undefined, loc: Loc, unprocessable?: boolean): Promise<string> };
}

export function createApiKeysService(deps: ApiKeysDeps) {
  const { db, audit } = deps;
  const cache = localCache<string, KeyClient>({ max: CACHE_LIMIT, ttlMs: CACHE_TTL_MS });
  const clear = () => cache.clear();
  deps.bus.subscribe(ACCOUNTS_CHANGED, clear);
  deps.bus.subscribe(KEYS_CHANGED, clear);
  /** When this process last wrote each key's last_used_at (clock milliseconds). */
  const usesWritten = localCache<string, number>({ max: CACHE_LIMIT, ttlMs: LAST_USED_WRITE_INTERVAL_MS });
  const writes = new Set<Promise<void>>();

  /**
   * Notes a use without the request waiting for it: at most one write a minute per key and process, and the write
   * itself skips a row another process touched within the minute. A failed write is retried at the next use.
   */
  function noteUse(keyId: string, now: Date): void {
    const last = usesWritten.get(keyId);
    if (last !== undefined && now.getTime() - last < LAST_USED_WRITE_INTERVAL_MS) return;
    usesWritten.set(keyId, now.getTime());
    const write = store
      .touchLastUsed(db, keyId, now, new Date(now.getTime() - LAST_USED_WRITE_INTERVAL_MS))
      .catch(() => usesWritten.delete(keyId))
      .then(() => void writes.delete(write));
    writes.add(write);
  }

  return {
    async create(actor: Actor, body: ApiKeyCreate) {
      const now = deps.clock.now();
      const expiresAt = body.expires_at === undefined ? null : new Date(body.expires_at);
      if (expiresAt && !(expiresAt.getTime() > now.getTime())) {
        throw new Unprocessable({ type: 'value_error', loc: ['body', 'expires_at'], msg: EXPIRY_NOT_IN_FUTURE });
      }
      const environment = await deps.environments.resolve(body.environment, ['body', 'environment'], true);
      const key = generateKey();
      const row = await db.transaction(async (tx) => {
        const inserted = await store.insertApiKey(tx, {
          id: randomUUID(),
          userId: actor.id,
          name: body.name,
          keyHash: hashKey(key),
          keyPrefix: key.slice(0, KEY_PREFIX.length + 6),
          scopes: body.scopes ?? [],
          createdAt: now,
          expiresAt,
          environment,
        });
        await audit.record(tx, actor, {
          action: 'api_key_create',
          entityType: 'api_key',
          entityId: inserted.id,
          after: { name: inserted.name, scopes: inserted.scopes, expires_at: inserted.expiresAt?.toISOString() ?? null, environment: inserted.environment },
        });
        return inserted;
      });
      return { ...toView(row), key };
    },

    async list(actor: Actor, all: boolean): Promise<ApiKeyView[]> {
      if (all && !hasRole(actor, 'ADMIN')) throw new Forbidden(NOT_ENOUGH_PERMISSIONS);
      return (await store.listApiKeys(db, all ? undefined : actor.id)).map(toView);
    },

    async delete(actor: Actor, id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await store.findApiKey(tx, id);
        if (!row) throw new NotFound(API_KEY_NOT_FOUND);
        if (row.userId !== actor.id && !hasRole(actor, 'ADMIN')) throw new Forbidden(NOT_ENOUGH_PERMISSIONS);
        await store.deleteApiKey(tx, id);
        await audit.record(tx, actor, {
          action: 'api_key_delete',
          entityType: 'api_key',
          entityId: id,
          before: { name: row.name, user_id: row.userId, scopes: row.scopes },
        });
      });
      clear();
      await deps.bus.publish(KEYS_CHANGED, id).catch(() => undefined);
    },

    /**
     * Whether the key with this id still authenticates (it exists, has not expired and its owner is active): for
     * connections it opened that hold its id, not the key (the OFREP event stream).
     */
    async isUsable(keyId: string): Promise<boolean> {
      const row = await store.findApiKey(db, keyId);
      if (!row || (row.expiresAt !== null && row.expiresAt.getTime() <= deps.clock.now().getTime())) return false;
      return (await deps.users.loadActor(row.userId)) !== undefined;
    },

    /** The environment of the key with this id (undefined: no such key): for connections that hold its id. */
    async environmentOf(keyId: string): Promise<string | undefined> {
      return (await store.findApiKey(db, keyId))?.environment;
    },

    /** The client a key authenticates now: undefined for an unknown, deleted or expired key or an owner without standing. */
    async resolve(rawKey: string): Promise<KeyClient | undefined> {
      if (!rawKey.startsWith(KEY_PREFIX) || rawKey.length > 128) return undefined;
      // Keyed by the key as sent: a hit costs one map lookup, no SHA-256, on every tracking and evaluation call.
      const found = await cache.fill(rawKey, async () => {
        const row = await store.findKeyByHash(db, hashKey(rawKey));
        const owner = row && (await deps.users.loadActor(row.userId));
        if (!row || !owner) return undefined;
        return {
          kind: 'apiKey',
          keyId: row.id,
          userId: row.userId,
          scopes: row.scopes,
          ownerRole: owner.role,
          ownerIsSuperuser: owner.isSuperuser,
          expiresAt: row.expiresAt,
          environment: row.environment,
        } satisfies KeyClient;
      });
      const now = deps.clock.now();
      if (!found || (found.expiresAt !== null && found.expiresAt.getTime() <= now.getTime())) return undefined;
      const client = deps.revalidateOwner ? await deps.revalidateOwner(found) : found;
      if (client) noteUse(client.keyId, now);
      return client;
    },

    /**
     * Calls `changed` whenever the key or its owner may have changed in any process (key deleted; owner deactivated,
     * deleted or given another role), after this process's cache has dropped what it knew. Returns the stop function.
     */
    watch(client: Pick<KeyClient, 'keyId' | 'userId'>, changed: () => void): () => void {
      const stops = [
        deps.bus.subscribe(KEYS_CHANGED, (keyId) => keyId === client.keyId && changed()),
        deps.bus.subscribe(ACCOUNTS_CHANGED, (userId) => userId === client.userId && changed()),
      ];
      return () => stops.forEach((stop) => stop());
    },

    expiresInMs(client: Pick<KeyClient, 'expiresAt'>): number | null {
      return client.expiresAt === null ? null : client.expiresAt.getTime() - deps.clock.now().getTime();
    },

    /** Resolves once every last_used_at write started so far has finished (tests, shutdown). */
    async settled(): Promise<void> {
      await Promise.all(writes);
    },
  };
}
