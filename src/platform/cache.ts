import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';

/**
 * A JSON cache with time-to-live: Redis when configured (shared by every API process), else process memory.
 * A Redis failure degrades to a miss, never to an error for the caller. The memory store is a bounded LRU.
 */
export interface Cache {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown, ttlSeconds: number): Promise<void>;
  delete(...keys: string[]): Promise<void>;
  deletePrefix(prefix: string): Promise<void>;
}

/** Entries the in-memory cache holds at most (least recently used evicted first), whatever their TTL. */
export const MEMORY_CACHE_MAX_ENTRIES = 5_000;

export function memoryCache(now: () => number = Date.now, maxEntries = MEMORY_CACHE_MAX_ENTRIES): Cache {
  const entries = new LRUCache<string, string>({ max: maxEntries, ttlAutopurge: false, perf: { now }, ttlResolution: 0 });
  return {
    async get<T>(key: string) {
      const hit = entries.get(key);
      return hit === undefined ? undefined : (JSON.parse(hit) as T);
    },
    async set(key, value, ttlSeconds) {
      entries.set(key, JSON.stringify(value), { ttl: Math.max(1, ttlSeconds * 1000) });
    },
    async delete(...keys) {
      for (const key of keys) entries.delete(key);
    },
    async deletePrefix(prefix) {
      for (const key of [...entries.keys()]) if (key.startsWith(prefix)) entries.delete(key);
    },
  };
}

export function redisCache(redis: Redis): Cache {
  return {
    async get<T>(key: string) {
      const raw = await redis.get(`cache:${key}`).catch(() => null);
      return raw === null ? undefined : (JSON.parse(raw) as T);
    },
    async set(key, value, ttlSeconds) {
      await redis.set(`cache:${key}`, JSON.stringify(value), 'EX', Math.max(1, Math.round(ttlSeconds))).catch(() => undefined);
    },
    async delete(...keys) {
      if (keys.length) await redis.del(...keys.map((k) => `cache:${k}`)).catch(() => undefined);
    },
    async deletePrefix(prefix) {
      const fullPrefix = `${redis.options.keyPrefix ?? ''}cache:${prefix}`;
      let cursor = '0';
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', `${fullPrefix}*`, 'COUNT', 500).catch(() => ['0', []] as [string, string[]]);
        cursor = next;
        const keys = found.map((k) => k.slice((redis.options.keyPrefix ?? '').length));
        if (keys.length) await redis.del(...keys).catch(() => undefined);
      } while (cursor !== '0');
    },
  };
}
