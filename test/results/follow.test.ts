import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { QUIET_LAG_MS, STAMP_ALLOWANCE_MS, stampWrite } from '../../src/db/write-marks.js';
import { createBus } from '../../src/platform/bus.js';
import { fixedClock } from '../../src/platform/clock.js';
import { createCommitFollower } from '../../src/modules/results/follow.js';
import { DATA_COMMITTED } from '../../src/modules/tracking/domain.js';
import { testApp, type TestApp } from '../helpers/test-app.js';
import { Driver, type Json } from './helpers.js';

/**
 * Rollups that follow ingestion (docs/adr/0007-rollup-follows-commits.md), on either storage path (TEST_DATABASE_URL
 * picks PostgreSQL): a commit rolls its experiment up with no results-rollup job, up to the writes in flight.
 */
const clock = fixedClock(new Date('2031-06-01T10:00:00.000Z'));
let t: TestApp;
let d: Driver;

beforeAll(async () => {
  t = await testApp({ clock, env: { ACCESS_TOKEN_EXPIRE_MINUTES: '525600', RESULTS_COMMIT_ROLLUP_MS: '1000' } });
  const dev = await t.user({ role: 'DEVELOPER' });
  d = new Driver(t, dev, (await t.apiKey(dev, ['sdk:ruleset'])).headers);
});
afterAll(() => t.close());

const watermarks = async (id: string) => new Map((await queryRows<{ stream: string; rolled_up_to: Date }>(t.database.db, sql`
  SELECT stream, rolled_up_to FROM result_watermarks WHERE experiment_id = ${id}`)).map((r) => [r.stream, new Date(r.rolled_up_to).getTime()]));
const rolledUpConverters = async (id: string) => (await queryRows<{ n: number | null }>(t.database.db, sql`
  SELECT sum(converters)::int AS n FROM result_variant_days WHERE experiment_id = ${id} AND event_name = 'purchase'`))[0].n ?? 0;
const conversions = (r: Json) => r.metrics[0].variants.reduce((n: number, v: Json) => n + v.conversions, 0);

describe('rollups driven by commits', () => {
  it('a commit rolls its experiment up to the writes in flight, without the results-rollup job', async () => {
    const e = await d.experiment();
    const users = [...(await d.assign(e.key, Array.from({ length: 30 }, (_, i) => `c${i}`))).keys()];
    await d.track(users.slice(0, 12).map((u) => ({ event_type: 'purchase', user_id: u, experiment_key: e.key })));
    clock.advance(5_000);
    // Another commit later: its rollup takes in everything up to the bound (nothing is in flight any more).
    await d.track([{ event_type: 'click', user_id: users[0], experiment_key: e.key }]);
    await t.services.results.drain();
    const marks = await watermarks(e.id);
    expect([...marks.keys()].sort()).toEqual(['assignments', 'exposures', 'metric:purchase']);
    for (const at of marks.values()) expect(at).toBe(clock.now().getTime() - QUIET_LAG_MS);
    expect(await rolledUpConverters(e.id)).toBe(12);
    expect(conversions(await d.get(`/api/v1/results/${e.id}?use_cache=false`))).toBe(12);
  });

  it('a row that waited longer than the allowance before its write is stored as of its write, less the allowance', async () => {
    const now = clock.now().getTime();
    const rows = [{ createdAt: new Date(now - 60_000) }, { createdAt: new Date(now - 100) }];
    await t.database.db.transaction((tx) => stampWrite(tx, clock, rows));
    expect(rows.map((r) => r.createdAt.getTime())).toEqual([now - STAMP_ALLOWANCE_MS, now - 100]);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('never moves past a writing transaction still open: its events are counted once it commits (PostgreSQL)', async () => {
    const e = await d.experiment();
    const users = [...(await d.assign(e.key, Array.from({ length: 20 }, (_, i) => `o${i}`))).keys()];
    await t.services.results.drain();
    clock.advance(10_000);
    const writtenAt = clock.now().getTime();
    // Hold the events table: the writer's transaction begins, announces itself and waits on its INSERT.
    const holder = await t.pgClient();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE events IN EXCLUSIVE MODE');
      const tracking = d.track(users.slice(0, 8).map((u) => ({ event_type: 'purchase', user_id: u, experiment_key: e.key })));
      for (;;) {
        const [{ waiting }] = (await holder.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_locks WHERE NOT granted AND relation = 'events'::regclass`)).rows;
        if (waiting > 0) break;
      }
      // Ten minutes later by the service's clock (the fixed lag of one minute would have passed the open write).
      clock.advance(600_000);
      await t.services.results.refresh(e.id);
      for (const at of (await watermarks(e.id)).values()) expect(at).toBeLessThan(writtenAt - STAMP_ALLOWANCE_MS);
      await holder.query('COMMIT');
      await tracking;
    } finally {
      await holder.end();
    }
    clock.advance(60_000);
    await t.services.results.drain();
    await t.services.results.refresh(e.id);
    expect(await rolledUpConverters(e.id)).toBe(8);
    expect(conversions(await d.get(`/api/v1/results/${e.id}?use_cache=false`))).toBe(8);
  });
});

describe('pacing of the rollups driven by commits', () => {
  /** Lets settled promises run their callbacks (one turn of the event loop, no time passes). */
  const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('one at a time per experiment; commits during a rollup ask for one more after it, not one each', async () => {
    const bus = createBus({ namespace: 'follow-test' });
    let now = 0;
    const started: string[] = [];
    const finish: Array<() => void> = [];
    const follower = createCommitFollower({
      bus, intervalMs: 1_000, now: () => now,
      refresh: (id) => {
        started.push(id);
        return new Promise<void>((resolve) => finish.push(resolve));
      },
    });
    const commit = (...experiments: string[]) => bus.publish(DATA_COMMITTED, JSON.stringify({ at: now, experiments, all: false }));
    await commit('a');
    await commit('a');
    await commit('b');
    expect(started).toEqual(['a', 'b']);
    for (let i = 0; i < 5; i++) await commit('a');
    now = 2_000;
    finish.shift()!();
    // Its interval has passed: the one more rollup of `a` starts as the first ends.
    await tick();
    expect(started).toEqual(['a', 'b', 'a']);
    finish.splice(0).forEach((f) => f());
    // A commit within the interval waits for its turn; drain starts it at once.
    now = 2_100;
    await tick();
    await commit('a');
    expect(started).toEqual(['a', 'b', 'a']);
    const drained = follower.drain();
    expect(started).toEqual(['a', 'b', 'a', 'a']);
    finish.splice(0).forEach((f) => f());
    await drained;
    // The results-rollup job's rollup takes its turn: after the running one, and commits meanwhile wait for it.
    now = 10_000;
    await commit('a');
    expect(started).toHaveLength(5);
    let jobRan = false;
    const job = follower.exclusive('a', async () => {
      jobRan = true;
    });
    await tick();
    expect(jobRan).toBe(false);
    finish.splice(0).forEach((f) => f());
    await job;
    expect(jobRan).toBe(true);
    await follower.drain();
    await follower.stop();
    await commit('a');
    expect(started).toHaveLength(5);
    await bus.close();
  });
});
