import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { minimumDetectableEffect, sampleSizeTwoProportions } from '../../src/stats/index.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
type Json = Record<string, any>;

let t: TestApp;
let viewer: TestUser;

beforeAll(async () => {
  t = await testApp();
  viewer = await t.user({ role: 'VIEWER' });
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

