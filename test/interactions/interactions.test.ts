import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjust, normalCdf } from '../../src/stats/index.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { Driver, type Json } from '../results/helpers.js';

let t: TestApp;
let dev: TestUser;
let analyst: TestUser;
let viewer: TestUser;
let d: Driver;

beforeAll(async () => {
  t = await testApp();
  [dev, analyst, viewer] = await Promise.all([t.user({ role: 'DEVELOPER' }), t.user({ role: 'ANALYST' }), t.user({ role: 'VIEWER' })]);
  d = new Driver(t, dev, (await t.apiKey(dev, ['sdk:ruleset'])).headers);
});
afterAll(() => t.close());

describe('interactions', () => {
  const THREE = [
    { name: 'control', is_control: true, traffic_allocation: 34 }, { name: 'b1', traffic_allocation: 33 }, { name: 'b2', traffic_allocation: 33 },
  ];

  it('scans the overlap of active experiments and tests a pair (beta) with the stored correction', async () => {
    // Fixed keys: the assignment hash is salted by the key, so these users fall into the same cells on every run (with
    // random keys the planted interaction was, on rare draws, not significant).
    const a = await d.experiment({ metrics: [{ name: 'Purchase', event_name: 'buy', is_primary: true }], extra: { key: 'ix-purchase' } });
    const b = await d.experiment({ variants: THREE, metrics: [{ name: 'Signup', event_name: 'signup', is_primary: true }], extra: { key: 'ix-signup' } });
    const users = Array.from({ length: 240 }, (_, i) => `ix${i}`);
    const inA = await d.assign(a.key, users);
    const inB = await d.assign(b.key, users.slice(0, 180));
    const buys = users.filter((u) => Number(u.slice(2)) % 3 === 0 || (inB.get(u) === b.variants[1].id && inA.get(u) !== a.variants[0].id));
    await d.track(buys.map((u) => ({ event_type: 'buy', user_id: u, experiment_key: a.key })));

    const scan = await d.get('/api/v1/interactions/scan', analyst);
    const pair = scan.pairs.find((p: Json) => [p.experiment_a_id, p.experiment_b_id].sort().join() === [a.id, b.id].sort().join());
    expect(pair.overlapping_users).toBe(180);
    const shareOf = (id: string) => (id === a.id ? 180 / 240 : 1);
    expect([pair.share_of_a, pair.share_of_b]).toEqual([shareOf(pair.experiment_a_id), shareOf(pair.experiment_b_id)]);
    expect(scan.experiments_scanned).toBeGreaterThanOrEqual(2);

    const result = await d.get(`/api/v1/interactions/${a.id}/${b.id}`, analyst);
    expect(result).toMatchObject({ experiment_a_id: a.id, experiment_b_id: b.id, overlapping_users: 180, analysis_status: 'beta' });
    expect(result.analysis_notice).toMatch(/^Beta: /);
    const ofA = result.analyses.find((x: Json) => x.experiment_id === a.id);
    expect(ofA).toMatchObject({ metric_name: 'Purchase', correction_method: 'benjamini_hochberg', confidence_level: 0.95 });
    const rate = (va: string, vb: string) => {
      const cell = users.slice(0, 180).filter((u) => inA.get(u) === va && inB.get(u) === vb);
      return { n: cell.length, p: cell.filter((u) => buys.includes(u)).length / cell.length };
    };
    const [ca, ta] = [a.variants[0].id, a.variants[1].id];
    const raw = b.variants.slice(1).map((vb: Json) => {
      const four = [rate(ta, vb.id), rate(ca, vb.id), rate(ta, b.variants[0].id), rate(ca, b.variants[0].id)];
      const interaction = four[0].p - four[1].p - (four[2].p - four[3].p);
      const se = Math.sqrt(four.reduce((s, c) => s + (c.p * (1 - c.p)) / c.n, 0));
      return { interaction, p: 2 * normalCdf(-Math.abs(interaction / se)) };
    });
    const adjusted = adjust(raw.map((x: Json) => x.p), 'benjamini_hochberg');
    ofA.tests.forEach((test: Json, i: number) => {
      expect(test.other_variant_id).toBe(b.variants[i + 1].id);
      expect(test.interaction).toBeCloseTo(raw[i].interaction, 12);
      expect(test.p_value).toBeCloseTo(raw[i].p, 12);
      expect(test.adjusted_p_value).toBeCloseTo(adjusted[i], 12);
    });
    expect(ofA.tests[0].is_significant).toBe(true);
    expect(result.analyses.find((x: Json) => x.experiment_id === b.id).cells).toHaveLength(6);
  });

  it('is for ANALYST, DEVELOPER and ADMIN (VIEWER 403); refuses the same experiment twice, unknown ids and non-UUIDs', async () => {
    const a = await d.experiment();
    expect((await t.inject({ method: 'GET', url: '/api/v1/interactions/scan', headers: viewer.headers })).statusCode).toBe(403);
    expect((await t.inject({ method: 'GET', url: '/api/v1/interactions/scan' })).statusCode).toBe(401);
    expect((await t.inject({ method: 'GET', url: `/api/v1/interactions/${a.id}/${a.id}`, headers: viewer.headers })).statusCode).toBe(403);
    const same = await t.inject({ method: 'GET', url: `/api/v1/interactions/${a.id}/${a.id}`, headers: dev.headers });
    expect(same.statusCode).toBe(400);
    expect(same.json()).toEqual({ detail: 'An experiment cannot be tested for interaction with itself' });
    const unknown = await t.inject({ method: 'GET', url: `/api/v1/interactions/${a.id}/00000000-0000-4000-8000-000000000000`, headers: dev.headers });
    expect(unknown.statusCode).toBe(404);
    const bad = await t.inject({ method: 'GET', url: `/api/v1/interactions/${a.id}/nope`, headers: dev.headers });
    expect(bad.json().detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'exp_b_id'] });
  });

  it('marks the beta routes in the OpenAPI document', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.paths['/api/v1/interactions/{exp_a_id}/{exp_b_id}'].get['x-stability']).toBe('beta');
    expect(doc.paths['/api/v1/results/{experiment_id}/post-stratification'].post['x-stability']).toBe('beta');
    expect(doc.paths['/api/v1/results/{experiment_id}'].get['x-stability']).toBeUndefined();
    expect(doc.paths['/api/v1/experiments/{experiment_id}/daily-results'].get).toBeDefined();
  });
});
