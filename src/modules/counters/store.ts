import { eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { experimentCounters } from '../../db/schema/counters.js';
import { ServiceUnavailable } from '../../platform/errors.js';
import type { Redis } from '../../platform/redis.js';

export interface Increment {
  experimentId: string;
  name: string;
  amount: number;
}

/** Where counter values live: Redis (atomic HINCRBY, shared by every process) or Postgres (atomic upsert). */
export interface CounterStore {
  increment(increments: Increment[]): Promise<number[]>;
  read(experimentId: string): Promise<Record<string, number>>;
  reset(experimentId: string): Promise<void>;
}

export function postgresCounterStore(db: Executor): CounterStore {
  return {
    async increment(increments) {
      // One statement per increment keeps each returned value exact even when two increments name one counter.
      const values: number[] = [];
      for (const inc of increments) {
        const [row] = await db
          .insert(experimentCounters)
          .values({ experimentId: inc.experimentId, name: inc.name, value: inc.amount })
          .onConflictDoUpdate({
            target: [experimentCounters.experimentId, experimentCounters.name],
            set: { value: sql`${experimentCounters.value} + ${inc.amount}`, updatedAt: sql`now()` },
          })
          .returning({ value: experimentCounters.value });
        values.push(Number(row.value));
      }
      return values;
    },
    async read(experimentId) {
      const rows = await db.select().from(experimentCounters).where(eq(experimentCounters.experimentId, experimentId));
      return Object.fromEntries(rows.map((r) => [r.name, Number(r.value)]));
    },
    async reset(experimentId) {
      await db.delete(experimentCounters).where(eq(experimentCounters.experimentId, experimentId));
    },
  };
}

export const COUNTERS_UNAVAILABLE = 'Counters are unavailable right now. Try again shortly.';

/** Redis unreachable: 503 with Retry-After rather than a 500 or counts kept where other processes cannot see them. */
async function orUnavailable<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch {
    throw new ServiceUnavailable(COUNTERS_UNAVAILABLE, 5);
  }
}

export function redisCounterStore(redis: Redis): CounterStore {
  const key = (experimentId: string) => `counters:${experimentId}`;
  return {
    increment: (increments) =>
      orUnavailable(async () => {
        const pipeline = redis.multi();
        for (const inc of increments) pipeline.hincrby(key(inc.experimentId), inc.name, inc.amount);
        const results = (await pipeline.exec()) ?? [];
        return results.map(([error, value]) => {
          if (error) throw error;
          return Number(value);
        });
      }),
    read: (experimentId) =>
      orUnavailable(async () => {
        const all = await redis.hgetall(key(experimentId));
        return Object.fromEntries(Object.entries(all).map(([name, value]) => [name, Number(value)]));
      }),
    reset: (experimentId) =>
      orUnavailable(async () => {
        await redis.del(key(experimentId));
      }),
  };
}
