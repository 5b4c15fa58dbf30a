/**
 * The metric library's per-user values taken from the metrics' own passes of a first computation (no read of their
 * own) give the numbers of the per-user read (`userValues`) that a computation over the rollup makes, on random data:
 * negative, zero and tied values, flag-tagged events, events before the assignment, a user with a conflicting exposure.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import * as userValuesModule from '../../src/modules/tracking/user-values.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { Driver, type Json, type TrackedEvent } from './helpers.js';

vi.mock('../../src/modules/tracking/user-values.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/modules/tracking/user-values.js')>();
  return { ...actual, userValues: vi.fn(actual.userValues) };
});

const clock = fixedClock(new Date('2031-05-04T12:00:00.000Z'));
let t: TestApp;
let dev: TestUser;
let analyst: TestUser;
let d: Driver;

beforeAll(async () => {
  t = await testApp({ clock, env: { ACCESS_TOKEN_EXPIRE_MINUTES: '525600' } });
  [dev, analyst] = await Promise.all([t.user({ role: 'DEVELOPER' }), t.user({ role: 'ANALYST' })]);
  d = new Driver(t, dev, (await t.apiKey(dev, ['sdk:ruleset'])).headers);
});
afterAll(() => t.close());

/** A small seeded generator (mulberry32), so that a failing seed can be run again. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

async function define(body: Json): Promise<Json> {
  const res = await t.call('POST', '/api/v1/metric-definitions', analyst, { ...body, name: t.unique(body.name) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** Equal, numbers to 1e-9 relative (sums of the same values in another order may differ in the last bits). */
function expectSame(actual: unknown, expected: unknown, path = ''): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    expect(Math.abs(actual - expected), `${path}: ${actual} vs ${expected}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected)));
  } else if (expected !== null && typeof expected === 'object') {
    expect(typeof actual, path).toBe('object');
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [k, v] of Object.entries(expected)) expectSame((actual as Json)[k], v, `${path}.${k}`);
  } else {
    expect(actual, path).toEqual(expected);
  }
}

describe('definition values from the passes of a first computation', () => {
  it.each([1, 2, 3])('equal those of the per-user read, on random data (seed %i)', async (seed) => {
    const next = random(seed);
    const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)];
    const defs = [
      await define({
        name: 'Revenue per purchase', kind: 'ratio', capping: { type: 'percentile', p: 0.8 },
        numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'purchase', aggregate: 'count' },
      }),
      await define({ name: 'p90 revenue', kind: 'quantile', event_name: 'revenue', aggregate: 'sum', quantile: 0.9 }),
      await define({ name: 'Median purchases', kind: 'quantile', event_name: 'purchase', aggregate: 'count', quantile: 0.5 }),
      await define({ name: 'Capped revenue', kind: 'mean', event_name: 'revenue', aggregate: 'sum', capping: { type: 'percentile', p: 0.9 } }),
      await define({ name: 'Purchases, at most 2', kind: 'mean', event_name: 'purchase', aggregate: 'count', capping: { type: 'absolute', value: 2 } }),
      await define({ name: 'Paid', kind: 'proportion', event_name: 'revenue' }),
      await define({ name: 'Revenue events per purchase', kind: 'ratio', numerator: { event_name: 'revenue', aggregate: 'count' }, denominator: { event_name: 'purchase', aggregate: 'count' } }),
    ];
    const e = await d.experiment({
      variants: [{ name: 'control', is_control: true, traffic_allocation: 34 }, { name: 'b', traffic_allocation: 33 }, { name: 'c', traffic_allocation: 33 }],
      metrics: [
        { name: 'Purchase', event_name: 'purchase', metric_type: 'conversion', is_primary: true },
        { name: 'Revenue', event_name: 'revenue', metric_type: 'revenue' },
        ...defs.map((def) => ({ name: def.name, event_name: 'revenue', metric_definition_id: def.id })),
      ],
    });
    const flag = await t.call('POST', '/api/v1/feature-flags/', dev, { key: t.unique('flag'), name: t.unique('Flag'), is_active: true, rollout_percentage: 100 });
    expect(flag.statusCode, flag.body).toBe(201);
    const users = Array.from({ length: 150 }, (_, i) => t.unique(`u${seed}-${i}`));
    // Events before the assignment: never counted.
    await d.track(users.slice(0, 15).map((u) => ({ event_type: 'revenue', user_id: u, experiment_key: e.key, value: 1e4 })));
    const assigned = await d.assign(e.key, users);
    const events: TrackedEvent[] = users.flatMap((u) => Array.from({ length: Math.floor(next() * 5) }, (): TrackedEvent => {
      const tag = next() < 0.2 ? { feature_flag_key: flag.json().key } : { experiment_key: e.key };
      return next() < 0.5
        ? { event_type: 'purchase', user_id: u, ...tag }
        : { event_type: 'revenue', user_id: u, ...tag, value: pick([0, -3, 5, 5, 12.5, Math.round(next() * 1e4) / 100, next() * 300]) };
    }));
    await d.track(events);
    const [control, other] = [e.variants.find((v: Json) => v.is_control).id, e.variants.find((v: Json) => !v.is_control).id];
    const conflicted = users.find((u) => assigned.get(u) === control)!;
    const res = await t.inject({
      method: 'POST', url: '/api/v1/tracking/events', headers: d.key,
      payload: { event_type: 'purchase', user_id: conflicted, experiment_id: e.id, variant_id: other },
    });
    expect(res.statusCode, res.body).toBe(200);

    const read = vi.mocked(userValuesModule.userValues);
    read.mockClear();
    const fromPasses = await d.get(`/api/v1/results/${e.id}?use_cache=false`);
    expect(read).not.toHaveBeenCalled();
    expect(fromPasses.diagnostics.excluded_users).toBe(1);

    // Rolled up, the metrics are read from the rollup: the definitions read their per-user values on their own.
    clock.advance(2 * 60_000);
    await t.services.results.refreshActive();
    const perUser = await d.get(`/api/v1/results/${e.id}?use_cache=false`);
    expect(read).toHaveBeenCalled();

    const blocks = (r: Json) => r.metrics.filter((m: Json) => m.definition).map((m: Json) => ({ variants: m.variants, definition: m.definition }));
    expect(blocks(fromPasses)).toHaveLength(defs.length);
    expectSame(blocks(fromPasses), blocks(perUser));
    // Something was measured: every arm has users with events, and the ratio was compared.
    expect(blocks(fromPasses)[0].definition.variants.every((v: Json) => v.users_with_events > 0)).toBe(true);
    expect(blocks(fromPasses)[0].definition.variants[1].difference).not.toBeNull();
  });
});
