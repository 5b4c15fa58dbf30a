import { LRUCache } from 'lru-cache';

/**
 * A bounded in-process cache: at most `max` entries, each kept at most `ttlMs`, least recently used evicted first.
 * Every in-process cache uses it, so no request pattern can grow process memory without bound.
 *
 * Refills follow the ruleset cache's generation pattern: `fill` notes the generation before it reads, and keeps
 * what it read only when no `clear`/`delete` happened meanwhile, so a value read before a committed change (and
 * announced on the bus while the read was in flight) is never stored over the invalidation.
 */
export interface LocalCache<K, V> {
  get(key: K): V | undefined;
  /** The cached value, else `load()`'s, kept when defined and nothing was invalidated during the load. */
  fill(key: K, load: () => Promise<V | undefined>, alsoKeep?: (value: V) => Iterable<[K, V]>): Promise<V | undefined>;
  /** Stores a value that cannot go stale (e.g. an immutable assignment). */
  set(key: K, value: V): void;
  delete(key: K): void;
  clear(): void;
  readonly size: number;
}

export function localCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(options: {
  max: number;
  ttlMs: number;
  now?: () => number;
}): LocalCache<K, V> {
  const lru = new LRUCache<K, V>({
    max: options.max,
    ttl: options.ttlMs,
    ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
  });
  let generation = 0;
  return {
    get: (key) => lru.get(key),
    async fill(key, load, alsoKeep) {
      const hit = lru.get(key);
      if (hit !== undefined) return hit;
      const started = generation;
      const value = await load();
      if (value !== undefined && started === generation) {
        lru.set(key, value);
        if (alsoKeep) for (const [k, v] of alsoKeep(value)) lru.set(k, v);
      }
      return value;
    },
    set: (key, value) => void lru.set(key, value),
    delete(key) {
      generation += 1;
      lru.delete(key);
    },
    clear() {
      generation += 1;
      lru.clear();
    },
    get size() {
      return lru.size;
    },
  };
}
