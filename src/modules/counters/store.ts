import { eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { experimentCounters } from '../../db/schema/counters.js';
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

export function redisCounterStore(redis: Redis): CounterStore {
  const key = (experimentId: string) => `counters:${experimentId}`;
  return {
    async increment(increments) {
      const pipeline = redis.multi();
      for (const inc of increments) pipeline.hincrby(key(inc.experimentId), inc.name, inc.amount);
      const results = (await pipeline.exec()) ?? [];
      return results.map(([error, value]) => {
        if (error) throw error;
        return Number(value);
      });
    },
    async read(experimentId) {
      const all = await redis.hgetall(key(experimentId));
      return Object.fromEntries(Object.entries(all).map(([name, value]) => [name, Number(value)]));
    },
    async reset(experimentId) {
      await redis.del(key(experimentId));
    },
  };
}
