import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjust, minimumDetectableEffect, normalCdf, sampleSizeTwoProportions } from '../../src/stats/index.js';
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

const post = (path: string, payload: unknown, user: TestUser | null = viewer) =>
  t.inject({ method: 'POST', url: `/api/v1/power/${path}`, headers: user?.headers ?? {}, payload: payload as Json });

describe('power calculator', () => {
  it('computes the sample size per variant, with corrections planned at alpha / comparisons', async () => {
    const res = await post('sample-size', { baseline_conversion_rate: 0.05, mde: 0.1 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      baseline_conversion_rate: 0.05, treatment_rate: 0.05 * 1.1, mde_absolute: 0.05 * 1.1 - 0.05, mde_relative: (0.05 * 1.1 - 0.05) / 0.05,
      confidence_level: 0.95, power: 0.8, n_variants: 2, comparisons: 1, correction_method: 'none', alpha_per_comparison: 0.05,
      required_sample_size_per_variant: sampleSizeTwoProportions(0.05, 0.05 * 1.1, 0.05, 0.8).value!.n_per_variant,
      total_sample_size: 2 * sampleSizeTwoProportions(0.05, 0.05 * 1.1, 0.05, 0.8).value!.n_per_variant,
    });
    const corrected = (await post('sample-size', { baseline_conversion_rate: 0.2, mde: 0.02, mde_type: 'absolute', n_variants: 3, correction_method: 'bonferroni', power: 0.9 })).json();
    expect(corrected).toMatchObject({ comparisons: 2, alpha_per_comparison: 0.025, treatment_rate: 0.22 });
    expect(corrected.required_sample_size_per_variant).toBe(sampleSizeTwoProportions(0.2, 0.22, 0.025, 0.9).value!.n_per_variant);
  });

  it('computes the minimum detectable effect and the runtime', async () => {
    const mde = (await post('mde', { baseline_conversion_rate: 0.1, sample_size_per_variant: 5000, direction: 'decrease' })).json();
    const expected = minimumDetectableEffect(0.1, 5000, 0.05, 0.8, 'decrease').value!;
    expect(mde).toMatchObject({ treatment_rate: expected.treatment_rate, direction: 'decrease', sample_size_per_variant: 5000 });
    expect(mde.mde_absolute).toBeCloseTo(expected.absolute, 15);
    expect(mde.mde_relative).toBeCloseTo(expected.relative, 14);
    const runtime = (await post('runtime', { required_sample_size: 10_000, daily_traffic: 3_000, n_variants: 3, traffic_share: 0.5 })).json();
    expect(runtime).toEqual({
      required_sample_size: 10_000, daily_traffic: 3_000, traffic_share: 0.5, n_variants: 3, users_per_variant_per_day: 500, total_sample_size: 30_000, days: 20,
    });
  });

  it('plans with built-in advice (generated_by template)', async () => {
    const plan = (await post('plan', { baseline_conversion_rate: 0.05, mde: 0.2, daily_traffic: 1000, n_variants: 3 })).json();
    const n = sampleSizeTwoProportions(0.05, 0.06, 0.05, 0.8).value!.n_per_variant;
    expect(plan).toMatchObject({ generated_by: 'template', required_sample_size_per_variant: n, estimated_days: Math.ceil(n / (1000 / 3)), daily_traffic: 1000 });
    expect(plan.advice.length).toBeGreaterThanOrEqual(3);
    expect(plan.advice.some((line: string) => line.includes('bonferroni'))).toBe(true);
    expect((await post('plan', { baseline_conversion_rate: 0.05, mde: 0.2 })).json()).toMatchObject({ estimated_days: null, daily_traffic: null });
  });

  it('refuses values beyond the bounds (less_than_equal at body.<field>) and unknown fields', async () => {
    const cases: Array<[string, Json, string]> = [
      ['sample-size', { baseline_conversion_rate: 0.1, mde: 0.1, n_variants: 101 }, 'n_variants'],
      ['mde', { baseline_conversion_rate: 0.1, sample_size_per_variant: 1e12 + 1 }, 'sample_size_per_variant'],
      ['runtime', { required_sample_size: 1e12 + 1, daily_traffic: 10 }, 'required_sample_size'],
      ['runtime', { required_sample_size: 10, daily_traffic: 1e13 }, 'daily_traffic'],
      ['plan', { baseline_conversion_rate: 0.1, mde: 0.1, daily_traffic: 2e12 }, 'daily_traffic'],
    ];
    for (const [path, body, field] of cases) {
      const res = await post(path, body);
      expect(res.statusCode).toBe(422);
      expect(res.json().detail).toEqual([expect.objectContaining({ type: 'less_than_equal', loc: ['body', field] })]);
    }
    expect((await post('sample-size', { baseline_conversion_rate: 0.1, mde: 0.1, extra: 1 })).json().detail[0]).toMatchObject({ type: 'extra_forbidden', loc: ['body', 'extra'] });
    expect((await post('sample-size', { mde: 0.1 })).json().detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'baseline_conversion_rate'] });
    expect((await post('sample-size', { baseline_conversion_rate: 0.1, mde: 0.1 }, null)).statusCode).toBe(401);
  });

  it('answers a calculation leaving floating-point range with 422 and a fixed message', async () => {
    const outOfRange = { type: 'value_error', loc: ['body'], msg: 'The calculation leaves the range of floating-point numbers; use less extreme values' };
    expect((await post('sample-size', { baseline_conversion_rate: 0.5, mde: 1e-9 })).json().detail).toEqual([outOfRange]);
    expect((await post('runtime', { required_sample_size: 1e12, daily_traffic: 1e-300 })).json().detail).toEqual([outOfRange]);
    const rate = await post('sample-size', { baseline_conversion_rate: 0.9, mde: 0.5 });
    expect(rate.statusCode).toBe(422);
    expect(rate.json().detail).toEqual([{ type: 'value_error', loc: ['body', 'mde'], msg: 'baseline_conversion_rate changed by mde must stay between 0 and 1' }]);
    expect((await post('mde', { baseline_conversion_rate: 0.5, sample_size_per_variant: 1 })).json().detail[0].loc).toEqual(['body', 'sample_size_per_variant']);
  });
});

describe('interactions', () => {
  const THREE = [
    { name: 'control', is_control: true, traffic_allocation: 34 }, { name: 'b1', traffic_allocation: 33 }, { name: 'b2', traffic_allocation: 33 },
  ];

  it('scans the overlap of active experiments and tests a pair (beta) with the stored correction', async () => {
    const a = await d.experiment({ metrics: [{ name: 'Purchase', event_name: 'buy', is_primary: true }] });
    const b = await d.experiment({ variants: THREE, metrics: [{ name: 'Signup', event_name: 'signup', is_primary: true }] });
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
