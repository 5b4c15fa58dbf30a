import type { Redis } from 'ioredis';

/**
 * A JSON cache with time-to-live: Redis when configured (shared by every API process), else process memory.
 * A Redis failure degrades to a miss, never to an error for the caller.
 */
export interface Cache {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown, ttlSeconds: number): Promise<void>;
  delete(...keys: string[]): Promise<void>;
  deletePrefix(prefix: string): Promise<void>;
}

export function memoryCache(now: () => number = Date.now): Cache {
  const entries = new Map<string, { value: string; expiresAt: number }>();
  return {
    async get<T>(key: string) {
      const hit = entries.get(key);
      if (!hit) return undefined;
      if (hit.expiresAt <= now()) {
        entries.delete(key);
        return undefined;
      }
      return JSON.parse(hit.value) as T;
    },
    async set(key, value, ttlSeconds) {
      entries.set(key, { value: JSON.stringify(value), expiresAt: now() + ttlSeconds * 1000 });
    },
    async delete(...keys) {
      for (const key of keys) entries.delete(key);
    },
    async deletePrefix(prefix) {
      for (const key of entries.keys()) if (key.startsWith(prefix)) entries.delete(key);
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
