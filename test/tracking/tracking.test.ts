import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { ensureEventPartitions } from '../../src/modules/tracking/partitions.js';
import { insertEvents } from '../../src/modules/tracking/store.js';
import { experiment } from '../helpers/fixtures.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
let key: Record<string, string>;
beforeAll(async () => {
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
  key = (await t.apiKey(dev)).headers;
});
afterAll(() => t.close());

const assign = (payload: Record<string, unknown>, headers = key) => t.inject({ method: 'POST', url: '/api/v1/tracking/assign', headers, payload });
const count = async (query: ReturnType<typeof sql>) => Number((await queryRows<{ n: number }>(t.database.db, query))[0].n);
const viewsOf = (experimentId: string, userId: string) =>
  count(sql`SELECT count(*)::int AS n FROM events WHERE experiment_id = ${experimentId} AND user_id = ${userId} AND kind = 'view'`);
const assignmentsOf = (experimentId: string, userId?: string) =>
  count(userId
    ? sql`SELECT count(*)::int AS n FROM assignments WHERE experiment_id = ${experimentId} AND user_id = ${userId}`
    : sql`SELECT count(*)::int AS n FROM assignments WHERE experiment_id = ${experimentId}`);

describe('assignment', () => {
  it('assigns sticky per user and records a view event on every call', async () => {
    const e = await experiment(t, dev);
    const first = await assign({ experiment_key: e.key, user_id: 'alice' });
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(body).toMatchObject({ experiment_key: e.key, user_id: 'alice', assigned: true, reason: 'assigned' });
    const variant = e.variants.find((v) => v.id === body.variant_id)!;
    expect(body).toMatchObject({ variant_name: variant.name, is_control: variant.is_control });
    expect(body.configuration).toEqual({ color: variant.is_control ? 'blue' : 'green' });
    for (let i = 0; i < 3; i++) expect((await assign({ experiment_key: e.key, user_id: 'alice' })).json()).toEqual(body);
    expect(await viewsOf(e.id, 'alice')).toBe(4);
    expect(await assignmentsOf(e.id, 'alice')).toBe(1);
  });

  it('splits users by the traffic allocation, deterministically', async () => {
    const e = await experiment(t, dev, {
      variants: [{ name: 'control', is_control: true, traffic_allocation: 20 }, { name: 'b', traffic_allocation: 80 }],
    });
    const counts: Record<string, number> = {};
    for (let i = 0; i < 300; i++) {
      const res = await assign({ experiment_key: e.key, user_id: `user-${i}` });
      counts[res.json().variant_name] = (counts[res.json().variant_name] ?? 0) + 1;
    }
    expect(counts.control).toBeGreaterThan(30);
    expect(counts.control).toBeLessThan(90);
  });

  it('answers 404 naming the key for unknown and not active experiments; 401 without a key', async () => {
    const draft = await experiment(t, dev, { start: false });
    for (const k of [draft.key, 'no-such-experiment']) {
      const res = await assign({ experiment_key: k, user_id: 'u' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: `No active experiment has the key '${k}'` });
    }
    expect((await assign({ experiment_key: draft.key, user_id: 'u' }, {})).statusCode).toBe(401);
    expect((await assign({ experiment_key: draft.key, user_id: 'u' }, { 'x-api-key': 'uplk_wrong' })).json()).toEqual({ detail: 'Invalid or missing API key' });
    const bearer = await assign({ experiment_key: draft.key, user_id: 'u' }, dev.headers);
    expect(bearer.statusCode).toBe(401);
  });

  it('validates the body (422) and the targeting context limits, recording nothing', async () => {
    const e = await experiment(t, dev);
    expect((await assign({ experiment_key: e.key })).json().detail).toEqual([{ type: 'missing', loc: ['body', 'user_id'], msg: 'Field required' }]);
    expect((await assign({ experiment_key: e.key, user_id: '' })).statusCode).toBe(422);
    expect((await assign({ experiment_key: e.key, user_id: 'x'.repeat(256) })).statusCode).toBe(422);
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 10; i++) deep = { nested: deep };
    const tooDeep = await assign({ experiment_key: e.key, user_id: 'deep', context: deep });
    expect(tooDeep.statusCode).toBe(422);
    expect(tooDeep.json().detail).toEqual([{ type: 'value_error', loc: ['body', 'context'], msg: 'Targeting context nested more than 10 levels deep' }]);
    const big = await assign({ experiment_key: e.key, user_id: 'big', context: { blob: 'x'.repeat(8200) } });
    expect(big.json().detail[0].msg).toBe('Targeting context larger than 8192 bytes');
    expect(await assignmentsOf(e.id)).toBe(0);
  });

  it('gives ineligible users the control variant with assigned false and the reason, recording nothing', async () => {
    const e = await experiment(t, dev, {
      targeting_rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'US' }] }] },
    });
    const miss = await assign({ experiment_key: e.key, user_id: 'bob', context: { country: 'FR' } });
    expect(miss.json()).toMatchObject({ assigned: false, reason: 'targeting', is_control: true, variant_name: 'control' });
    expect(await assignmentsOf(e.id, 'bob')).toBe(0);
    expect(await viewsOf(e.id, 'bob')).toBe(0);
    const hit = await assign({ experiment_key: e.key, user_id: 'carol', context: { user: { country: 'US' } } });
    expect(hit.json()).toMatchObject({ assigned: true, reason: 'assigned' });
    // Once enrolled, the user keeps the assignment whatever the context says later.
    expect((await assign({ experiment_key: e.key, user_id: 'carol', context: { country: 'FR' } })).json().assigned).toBe(true);
  });

  it('keeps a user in only one experiment of a mutual exclusion group', async () => {
    const a = await experiment(t, dev, { start: false });
    const b = await experiment(t, dev, { start: false });
    const group = await t.inject({ method: 'POST', url: '/api/v1/mutual-exclusion-groups', headers: dev.headers, payload: { name: t.unique('g'), experiment_ids: [a.id, b.id] } });
    expect(group.statusCode).toBe(201);
    for (const e of [a, b]) await t.inject({ method: 'POST', url: `/api/v1/experiments/${e.id}/start`, headers: dev.headers });
    let both = 0;
    let exclusions = 0;
    for (let i = 0; i < 60; i++) {
      const ra = (await assign({ experiment_key: a.key, user_id: `mx-${i}` })).json();
      const rb = (await assign({ experiment_key: b.key, user_id: `mx-${i}` })).json();
      if (ra.assigned && rb.assigned) both++;
      exclusions += [ra, rb].filter((r) => r.reason === 'mutual_exclusion').length;
    }
    expect(both).toBe(0);
    expect(exclusions).toBe(60);
  });

  it('gives one row and one answer to 50 concurrent first calls of one user', async () => {
    const e = await experiment(t, dev);
    const results = await Promise.all(Array.from({ length: 50 }, () => assign({ experiment_key: e.key, user_id: 'racer' })));
    expect(new Set(results.map((r) => r.statusCode))).toEqual(new Set([200]));
    expect(new Set(results.map((r) => r.json().variant_id)).size).toBe(1);
    expect(await assignmentsOf(e.id, 'racer')).toBe(1);
  });

  it('stores the assignment context', async () => {
    const e = await experiment(t, dev);
    await assign({ experiment_key: e.key, user_id: 'ctx-user', context: { plan: 'pro' } });
    const rows = await queryRows<{ context: unknown }>(t.database.db, sql`SELECT context FROM assignments WHERE experiment_id = ${e.id}`);
    expect(rows[0].context).toEqual({ plan: 'pro' });
  });

  it('lists a user’s assignments with experiment and variant names', async () => {
    const e = await experiment(t, dev);
    const a = (await assign({ experiment_key: e.key, user_id: 'lister' })).json();
    const res = await t.inject({ method: 'GET', url: '/api/v1/tracking/assignments/lister', headers: key });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([expect.objectContaining({ experiment_id: e.id, experiment_key: e.key, variant_id: a.variant_id, variant_name: a.variant_name })]);
    expect(res.json()[0].experiment_name).toMatch(/^Experiment /);
  });
});

describe('batch assignment (beta)', () => {
  const batch = (payload: Record<string, unknown>, headers: Record<string, string>) =>
    t.inject({ method: 'POST', url: '/api/v1/tracking/assign/batch', headers, payload });

  it('needs an sdk:ruleset key whose owner is ADMIN, DEVELOPER or a superuser', async () => {
    const e = await experiment(t, dev);
    const plain = batch({ experiment_key: e.key, users: [{ user_id: 'a' }] }, key);
    expect((await plain).statusCode).toBe(403);
    const analyst = await t.user({ role: 'ANALYST' });
    const analystKey = (await t.apiKey(analyst, ['sdk:ruleset'])).headers;
    expect((await batch({ experiment_key: e.key, users: [{ user_id: 'a' }] }, analystKey)).statusCode).toBe(403);
    const su = await t.user({ superuser: true });
    const suKey = (await t.apiKey(su, ['sdk:ruleset'])).headers;
    expect((await batch({ experiment_key: e.key, users: [{ user_id: 'a' }] }, suKey)).statusCode).toBe(200);
  });

  it('assigns in request order, keeps existing assignments, counts every reason and records no view events', async () => {
    const e = await experiment(t, dev, {
      targeting_rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'plan', operator: 'equals', value: 'pro' }] }] },
    });
    const sdkKey = (await t.apiKey(dev, ['sdk:ruleset'])).headers;
    const first = (await assign({ experiment_key: e.key, user_id: 'b-0', context: { plan: 'pro' } })).json();
    const res = await batch({
      experiment_key: e.key,
      users: [{ user_id: 'b-0' }, { user_id: 'b-1', context: { plan: 'pro' } }, { user_id: 'b-2', context: { plan: 'free' } }, { user_id: 'b-3', context: { plan: 'pro' } }],
    }, sdkKey);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.assignments.map((a: { user_id: string }) => a.user_id)).toEqual(['b-0', 'b-1', 'b-2', 'b-3']);
    expect(body.assignments[0]).toEqual({ user_id: 'b-0', variant_id: first.variant_id, assigned: true, reason: 'assigned' });
    expect(body.assignments[2]).toMatchObject({ assigned: false, reason: 'targeting' });
    expect(body.counts).toEqual({ assigned: 3, holdout: 0, mutual_exclusion: 0, targeting: 1 });
    expect(Object.keys(body.variants).sort()).toEqual(e.variants.map((v) => v.id).sort());
    expect(await assignmentsOf(e.id)).toBe(3);
    expect(await viewsOf(e.id, 'b-1')).toBe(0);
  });

  it('checks every context before assigning anyone, prefixing the position; refuses duplicates and unknown fields', async () => {
    const e = await experiment(t, dev);
    const sdkKey = (await t.apiKey(dev, ['sdk:ruleset'])).headers;
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 11; i++) deep = { d: deep };
    const res = await batch({ experiment_key: e.key, users: [{ user_id: 'ok-1' }, { user_id: 'ok-2' }, { user_id: 'bad', context: deep }] }, sdkKey);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0]).toMatchObject({ loc: ['body', 'users', 2, 'context'], msg: 'users[2]: Targeting context nested more than 10 levels deep' });
    expect(await assignmentsOf(e.id)).toBe(0);
    expect((await batch({ experiment_key: e.key, users: [{ user_id: 'x' }, { user_id: 'x' }] }, sdkKey)).statusCode).toBe(422);
    expect((await batch({ experiment_key: e.key, users: [{ user_id: 'x', extra: 1 }] }, sdkKey)).statusCode).toBe(422);
    expect((await batch({ experiment_key: e.key, users: [] }, sdkKey)).statusCode).toBe(422);
    const tooMany = Array.from({ length: 1001 }, (_, i) => ({ user_id: `u${i}` }));
    expect((await batch({ experiment_key: e.key, users: tooMany }, sdkKey)).statusCode).toBe(422);
    expect(await assignmentsOf(e.id)).toBe(0);
  });
});

describe('events', () => {
  const track = (payload: Record<string, unknown>) => t.inject({ method: 'POST', url: '/api/v1/tracking/track', headers: key, payload });

  it('stores an event, returns event_type as event_name, and attaches an assigned user’s event to the variant', async () => {
    const e = await experiment(t, dev);
    const a = (await assign({ experiment_key: e.key, user_id: 'buyer' })).json();
    const res = await track({ event_type: 'purchase', user_id: 'buyer', experiment_key: e.key, value: 12.5, metadata: { sku: 'A1' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ event_name: 'purchase', user_id: 'buyer', value: 12.5, variant_id: a.variant_id, experiment_key: e.key, metadata: { sku: 'A1' } });
    const rows = await queryRows<{ variant_id: string }>(t.database.db, sql`SELECT variant_id FROM events WHERE id = ${res.json().id}`);
    expect(rows[0].variant_id).toBe(a.variant_id);
  });

  it('stores events without keys unattached', async () => {
    const res = await track({ event_type: 'page_view', user_id: 'anon' });
    expect(res.statusCode).toBe(200);
    const rows = await queryRows<{ experiment_id: null; feature_flag_id: null; variant_id: null }>(
      t.database.db, sql`SELECT experiment_id, feature_flag_id, variant_id FROM events WHERE id = ${res.json().id}`);
    expect(rows[0]).toEqual({ experiment_id: null, feature_flag_id: null, variant_id: null });
  });

  it('answers 404 naming only the keys sent', async () => {
    const onlyExp = await track({ event_type: 'x', experiment_key: 'ghost-exp' });
    expect(onlyExp.statusCode).toBe(404);
    expect(onlyExp.json()).toEqual({ detail: "No experiment has the experiment_key 'ghost-exp'." });
    const onlyFlag = await track({ event_type: 'x', feature_flag_key: 'ghost-flag' });
    expect(onlyFlag.json()).toEqual({ detail: "No feature flag has the feature_flag_key 'ghost-flag'." });
    const none = await queryRows<{ n: number }>(t.database.db, sql`SELECT count(*)::int AS n FROM events WHERE event_name = 'x'`);
    expect(none[0].n).toBe(0);
  });

  it('stores the valid events of a batch and lists the invalid ones', async () => {
    const e = await experiment(t, dev);
    const res = await t.inject({
      method: 'POST', url: '/api/v1/tracking/batch', headers: key,
      payload: { events: [{ event_type: 'b1', user_id: 'u' }, { event_type: 'b2', experiment_key: 'missing-exp' }, { event_type: 'b3', experiment_key: e.key }] },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ received: 3, stored: 2, failed: 1 });
    expect(body.errors).toEqual([{ index: 1, error: "No experiment has the experiment_key 'missing-exp'." }]);
    expect(body.results.map((r: { success: boolean }) => r.success)).toEqual([true, false, true]);
    const stored = await queryRows<{ event_name: string }>(t.database.db, sql`SELECT event_name FROM events WHERE event_name IN ('b1','b2','b3') ORDER BY event_name`);
    expect(stored.map((r) => r.event_name)).toEqual(['b1', 'b3']);
    const tooMany = Array.from({ length: 1001 }, () => ({ event_type: 'x' }));
    expect((await t.inject({ method: 'POST', url: '/api/v1/tracking/batch', headers: key, payload: { events: tooMany } })).statusCode).toBe(422);
  });

  it('records events by ids: one sentence per unknown id, never the id; non-UUIDs are 422', async () => {
    const e = await experiment(t, dev);
    const url = '/api/v1/tracking/events';
    const ghost = '00000000-0000-4000-8000-00000000abcd';
    const res = await t.inject({ method: 'POST', url, headers: key, payload: { event_type: 'x', experiment_id: ghost, feature_flag_id: ghost, variant_id: ghost } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'No experiment has that experiment_id. No feature flag has that feature_flag_id. No variant has that variant_id.' });
    expect(res.body).not.toContain(ghost);
    expect((await t.inject({ method: 'POST', url, headers: key, payload: { event_type: 'x', experiment_id: 'nope' } })).json().detail[0])
      .toMatchObject({ type: 'uuid_parsing', loc: ['body', 'experiment_id'] });
    const ok = await t.inject({ method: 'POST', url, headers: key, payload: { event_type: 'by-id', user_id: 'u', variant_id: e.variants[1].id } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ event_name: 'by-id', experiment_id: e.id, variant_id: e.variants[1].id, feature_flag_id: null });
  });

  it('creates monthly partitions ahead and moves rows already in the default partition', async () => {
    const future = new Date(Date.UTC(2031, 5, 15));
    const id = '00000000-0000-4000-8000-0000000f0001';
    // A state the API cannot reach (the clock is real): an event far ahead, in the DEFAULT partition.
    await insertEvents(t.database.db, [{
      id, eventName: 'future', userId: 'u', experimentId: null, featureFlagId: null, variantId: null, value: null, metadata: null, kind: 'track', createdAt: future,
    }]);
    const created = await ensureEventPartitions(t.database.db, future, 1);
    expect(created).toEqual(['events_y2031m06', 'events_y2031m07']);
    expect(await ensureEventPartitions(t.database.db, future, 1)).toEqual([]);
    const where = await queryRows<{ part: string }>(t.database.db, sql`SELECT tableoid::regclass::text AS part FROM events WHERE id = ${id}`);
    expect(where[0].part).toMatch(/events_y2031m06$/);
  });
});

describe('event block ranges', () => {
  // Enough events to fill several of the BRIN index's 32-page ranges.
  const insertMany = (n: number, at: Date) => insertEvents(t.database.db, Array.from({ length: n }, (_, i) => ({
    id: randomUUID(), eventName: 'ranges', userId: `ranges-${i}`, experimentId: null, featureFlagId: null, variantId: null, value: i, metadata: null,
    kind: 'track' as const, createdAt: at,
  })));
  /** The partition the events of `at` land in, and its BRIN index on created_at. */
  const partitionOf = async (at: Date) => (await queryRows<{ partition: string; index: string }>(t.database.db, sql`
    SELECT e.tableoid::regclass::text AS partition, i.inhrelid::regclass::text AS index
    FROM (SELECT tableoid FROM events WHERE created_at = ${at.toISOString()}::timestamptz LIMIT 1) e
    JOIN pg_index x ON x.indrelid = e.tableoid
    JOIN pg_inherits i ON i.inhrelid = x.indexrelid AND i.inhparent = 'events_created_at_brin'::regclass`))[0];
  /** Summarizes what is left unsummarized of the index now: how many ranges that was. */
  const leftUnsummarized = (index: string) => count(sql`SELECT brin_summarize_new_values(${index}::regclass)::int AS n`);

  it('the event-ranges job summarizes the ranges filled since its last run, before the results rollup reads them', async () => {
    const jobs = t.services.scheduler.jobs().map((j) => j.name);
    expect(jobs).toContain('event-ranges');
    expect(jobs.indexOf('event-ranges')).toBeLessThan(jobs.indexOf('results-rollup'));
    const at = new Date();
    await insertMany(5000, at);
    const { index } = await partitionOf(at);
    await t.services.trackingData.summarizeRanges();
    expect(await leftUnsummarized(index)).toBe(0);
  });

  it.runIf(Boolean(process.env.TEST_DATABASE_URL))('skips a partition another transaction holds, and summarizes it on a later run', async () => {
    const at = new Date(Date.now() - 1);
    await insertMany(5000, at);
    const { partition, index } = await partitionOf(at);
    const client = await t.pgClient();
    try {
      // What VACUUM holds while it runs: the job gives the partition up rather than wait (or cancel an autovacuum).
      await client.query('BEGIN');
      await client.query(`LOCK TABLE ${partition} IN SHARE UPDATE EXCLUSIVE MODE`);
      await t.services.trackingData.summarizeRanges();
      await client.query('ROLLBACK');
    } finally {
      await client.end();
    }
    expect(await leftUnsummarized(index)).toBeGreaterThan(0);
    await insertMany(5000, at);
    await t.services.trackingData.summarizeRanges();
    expect(await leftUnsummarized(index)).toBe(0);
  });
});
