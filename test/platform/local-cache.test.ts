import { describe, expect, it } from 'vitest';
import { memoryCache } from '../../src/platform/cache.js';
import { localCache } from '../../src/platform/local-cache.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('in-process caches are bounded', () => {
  it('the memory cache evicts the least recently used entry past its size and honours each TTL', async () => {
    let now = 1_000;
    const cache = memoryCache(() => now, 3);
    for (const key of ['a', 'b', 'c']) await cache.set(key, key, 60);
    await cache.get('a');
    await cache.set('d', 'd', 60);
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toBe('a');
    await cache.set('short', 1, 5);
    now += 5_001;
    expect(await cache.get('short')).toBeUndefined();
    expect(await cache.get('d')).toBe('d');
    await cache.deletePrefix('d');
    expect(await cache.get('d')).toBeUndefined();
  });

  it('holds at most its default number of entries whatever the keys', async () => {
    const cache = memoryCache();
    for (let i = 0; i < 6_000; i++) await cache.set(`results:${i}`, i, 300);
    expect(await cache.get('results:0')).toBeUndefined();
    expect(await cache.get('results:5999')).toBe(5999);
  });

  it('a local cache keeps at most max entries and forgets them after the TTL', () => {
    let now = 5_000;
    const cache = localCache<string, number>({ max: 2, ttlMs: 1_000, now: () => now });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(cache.size).toBe(2);
    expect(cache.get('a')).toBeUndefined();
    now = 6_001;
    expect(cache.get('c')).toBeUndefined();
  });
});

describe('refills never store a value read before an invalidation', () => {
  it('a load in flight across a clear is returned but not kept', async () => {
    const cache = localCache<string, string>({ max: 10, ttlMs: 60_000 });
    const read = deferred<string>();
    const filling = cache.fill('key', () => read.promise);
    cache.clear(); // a committed change is announced while the read is in flight
    read.resolve('stale');
    expect(await filling).toBe('stale');
    expect(cache.get('key')).toBeUndefined();
    expect(await cache.fill('key', async () => 'fresh')).toBe('fresh');
    expect(cache.get('key')).toBe('fresh');
  });

  it('a delete of another key also voids the refill, and undefined is never cached', async () => {
    const cache = localCache<string, string>({ max: 10, ttlMs: 60_000 });
    const read = deferred<string>();
    const filling = cache.fill('key', () => read.promise);
    cache.delete('other');
    read.resolve('value');
    await filling;
    expect(cache.get('key')).toBeUndefined();
    await cache.fill('missing', async () => undefined);
    expect(cache.size).toBe(0);
  });
});
