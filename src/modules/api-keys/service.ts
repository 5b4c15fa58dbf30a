import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { ApiKeyRow } from '../../db/schema/api-keys.js';
import type { AuditLog } from '../../platform/audit.js';
import { hasRole, type Actor, type KeyClient } from '../../platform/auth.js';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { localCache } from '../../platform/local-cache.js';
import { Forbidden, NOT_ENOUGH_PERMISSIONS, NotFound } from '../../platform/errors.js';
import { ACCOUNTS_CHANGED } from '../users/service.js';
import type { ApiKeyCreate, ApiKeyView } from './schemas.js';
import * as store from './store.js';

/** Every key starts with this fixed five-character prefix, so leaked keys are easy to recognise and scan for. */
export const KEY_PREFIX = 'uplk_';
export const API_KEY_NOT_FOUND = 'API key not found';
/** Announced after a key is deleted: caches drop resolved keys, and streams opened with the key end. */
export const KEYS_CHANGED = 'api-keys.changed';
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
}

export function createApiKeysService(deps: ApiKeysDeps) {
  const { db, audit } = deps;
  const cache = localCache<string, KeyClient>({ max: CACHE_LIMIT, ttlMs: CACHE_TTL_MS });
  const clear = () => cache.clear();
  deps.bus.subscribe(ACCOUNTS_CHANGED, clear);
  deps.bus.subscribe(KEYS_CHANGED, clear);

  return {
    async create(actor: Actor, body: ApiKeyCreate) {
      const key = generateKey();
      const row = await db.transaction(async (tx) => {
        const inserted = await store.insertApiKey(tx, {
          id: randomUUID(),
          userId: actor.id,
          name: body.name,
          keyHash: hashKey(key),
          keyPrefix: key.slice(0, KEY_PREFIX.length + 6),
          scopes: body.scopes ?? [],
          createdAt: deps.clock.now(),
        });
        await audit.record(tx, actor, {
          action: 'api_key_create',
          entityType: 'api_key',
          entityId: inserted.id,
          after: { name: inserted.name, scopes: inserted.scopes },
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

    /** Whether the key with this id still authenticates (it exists and its owner is active): for connections it opened. */
    async isUsable(keyId: string): Promise<boolean> {
      const row = await store.findApiKey(db, keyId);
      return row !== undefined && (await deps.users.loadActor(row.userId)) !== undefined;
    },

    async resolve(rawKey: string): Promise<KeyClient | undefined> {
      if (!rawKey.startsWith(KEY_PREFIX) || rawKey.length > 128) return undefined;
      // Keyed by the key as sent: a hit costs one map lookup, no SHA-256, on every tracking and evaluation call.
      return cache.fill(rawKey, async () => {
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
        } satisfies KeyClient;
      });
    },
  };
}
