/**
 * Issue 32's "done when", through the API: five metric library definitions (proportion, mean, ratio by the delta
 * method, capped mean, p90) used by two experiments, every number of the results, sequential, Bayesian, sample-size
 * and CUPED routes checked against numpy/SciPy (test/vectors/metric-definitions-http.json, written by
 * scripts/reference/metrics.py from per-user events drawn with a fixed seed; relative 1e-9).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { experimentSalt, pickWeighted } from '../../src/targeting/index.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { Driver, type Json, type TrackedEvent } from './helpers.js';

interface UserData { page_views: number; orders: number[]; load_times: number[]; visits_before: number }
interface Reference {
  definitions: { cap_percentile: number; quantile: number };
  experiments: Array<{ expected_effect: number; variants: UserData[][]; expected: Json }>;
}
const reference = JSON.parse(readFileSync(new URL('../vectors/metric-definitions-http.json', import.meta.url), 'utf8')) as Reference;

const clock = fixedClock(new Date('2031-04-01T12:00:00.000Z'));
let t: TestApp;
let dev: TestUser;
let d: Driver;

beforeAll(async () => {
  t = await testApp({ clock, env: { ACCESS_TOKEN_EXPIRE_MINUTES: '525600' } });
  dev = await t.user({ role: 'DEVELOPER' });
  d = new Driver(t, dev, (await t.apiKey(dev, ['sdk:ruleset'])).headers);
});
afterAll(() => t.close());

function close(actual: unknown, expected: number, what: string): void {
  expect(typeof actual, what).toBe('number');
  const a = actual as number;
  if (expected === 0) expect(Math.abs(a), what).toBeLessThanOrEqual(1e-12);
  else expect(Math.abs(a - expected) / Math.abs(expected), `${what}: ${a} vs ${expected}`).toBeLessThanOrEqual(1e-9);
}

const KINDS = ['proportion', 'mean', 'ratio', 'capped', 'p90'] as const;

describe('five definitions used by two experiments, against numpy/SciPy', () => {
  const defs: Record<string, Json> = {};
  const runs: Array<{ e: Json; expected: Json }> = [];

  beforeAll(async () => {
    const define = async (body: Json) => {
      const res = await t.call('POST', '/api/v1/metric-definitions', dev, { ...body, name: t.unique(body.name) });
      expect(res.statusCode, res.body).toBe(201);
      return res.json();
    };
    defs.proportion = await define({ name: 'Purchased', kind: 'proportion', event_name: 'purchase' });
    defs.mean = await define({ name: 'Revenue per user', kind: 'mean', event_name: 'revenue', aggregate: 'sum' });
    defs.ratio = await define({
      name: 'Revenue per page view', kind: 'ratio',
      numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'page_view', aggregate: 'count' },
    });
    defs.capped = await define({
      name: 'Capped revenue', kind: 'mean', event_name: 'revenue', aggregate: 'sum', capping: { type: 'percentile', p: reference.definitions.cap_percentile },
    });
    defs.p90 = await define({ name: 'p90 load time', kind: 'quantile', event_name: 'load_time', aggregate: 'sum', quantile: reference.definitions.quantile });

    for (const [k, x] of reference.experiments.entries()) {
      const n = x.variants.length;
      const weights = n === 2 ? [50, 50] : [34, 33, 33];
      const metric = (kind: string) => ({ name: kind, event_name: 'purchase', metric_definition_id: defs[kind].id, expected_effect: x.expected_effect });
      const e = await d.experiment({
        variants: weights.map((w, i) => ({ name: i === 0 ? 'control' : `treatment ${i}`, is_control: i === 0, traffic_allocation: w })),
        metrics: [{ ...metric('capped'), is_primary: true }, ...KINDS.filter((kind) => kind !== 'capped').map(metric),
          { name: 'Visits', event_name: 'visit', metric_type: 'count' }],
        extra: { bayesian_enabled: k === 0 },
      });
      if (k === 0) {
        const visits = e.metrics.find((m: Json) => m.event_name === 'visit').id;
        const put = await t.call('PUT', `/api/v1/experiments/${e.id}`, dev, { variance_reduction_config: { covariate_metric_id: visits } });
        expect(put.statusCode, put.body).toBe(200);
      }
      // Users whose assignment is variant i, one per reference user of variant i (the experiment's own bucketing).
      const slots = x.variants.map((v) => v.length);
      const chosen = x.variants.map(() => [] as string[]);
      for (let i = 0; slots.some((s) => s > 0); i += 1) {
        const user = `${e.key}-${i}`;
        const v = pickWeighted(experimentSalt(e.key), user, weights);
        if (slots[v] > 0) {
          slots[v] -= 1;
          chosen[v].push(user);
        }
      }
      const data = new Map(chosen.flatMap((users, v) => users.map((u, j) => [u, x.variants[v][j]] as const)));
      const track = (u: string, event_type: string, value?: number): TrackedEvent => ({ event_type, user_id: u, experiment_key: e.key, ...(value === undefined ? {} : { value }) });
      await d.track([...data].flatMap(([u, r]) => Array.from({ length: r.visits_before }, () => track(u, 'visit'))));
      clock.advance(60_000);
      const assigned = await d.assign(e.key, [...data.keys()]);
      const ids = e.variants.map((v: Json) => v.id);
      for (const [v, users] of chosen.entries()) for (const u of users) expect(assigned.get(u)).toBe(ids[v]);
      await d.track([...data].flatMap(([u, r]) => [
        ...Array.from({ length: r.page_views }, () => track(u, 'page_view')),
        ...r.orders.flatMap((value) => [track(u, 'purchase'), track(u, 'revenue', value)]),
        ...r.load_times.map((value) => track(u, 'load_time', value)),
      ]));
      runs.push({ e, expected: x.expected });
    }
    // Two experiments' assignments and events through the API: more than the default hook time on a loaded machine.
  }, 300_000);

  const metricOf = (payload: Json, kind: string) => payload.metrics.find((m: Json) => m.definition?.metric_definition_id === defs[kind].id);

  it('results: every variant value, difference, interval, p-value and corrected p-value', async () => {
    for (const { e, expected } of runs) {
      const payload = await d.get(`/api/v1/results/${e.id}`);
      expect(payload.correction_method).toBe('benjamini_hochberg');
      for (const kind of KINDS) {
        const m = metricOf(payload, kind);
        const want = expected[kind];
        expect(m.definition.version).toBe(1);
        m.definition.variants.forEach((v: Json, i: number) => close(v.value, want.values[i], `${kind} value ${i}`));
        if (want.with_events) expect(m.definition.variants.map((v: Json) => v.users_with_events)).toEqual(want.with_events);
        for (const [j, w] of want.treatments.entries()) {
          const arm = m.variants[j + 1];
          const def = m.definition.variants[j + 1];
          const what = `${kind} treatment ${j + 1}`;
          close(arm.p_value, w.p_value, `${what} p`);
          close(arm.adjusted_p_value, w.adjusted_p_value, `${what} adjusted p`);
          close(arm.relative_lift, w.relative, `${what} relative`);
          close(arm.confidence_interval.lower, w.relative_ci[0], `${what} relative ci`);
          close(arm.confidence_interval.upper, w.relative_ci[1], `${what} relative ci`);
          close(def.difference, w.difference, `${what} difference`);
          close(def.difference_ci.lower, w.difference_ci[0], `${what} difference ci`);
          close(def.difference_ci.upper, w.difference_ci[1], `${what} difference ci`);
        }
      }
      const capped = metricOf(payload, 'capped').definition.capping;
      close(capped.cap, expected.capped.cap, 'cap');
      expect(capped.users_capped).toBe(expected.capped.users_capped.reduce((a: number, b: number) => a + b, 0));
    }
  });

  it('sequential (mSPRT) of the capped mean, the ratio and the proportion', async () => {
    const { e, expected } = runs[0];
    for (const kind of ['capped', 'ratio', 'proportion']) {
      const m = e.metrics.find((x: Json) => x.metric_definition_id === defs[kind].id);
      const r = await d.get(`/api/v1/results/${e.id}/sequential?metric_id=${m.id}`);
      const c = r.sequential.comparisons[0];
      const w = expected.sequential[kind];
      expect(r.sequential.definition).toEqual({ metric_definition_id: defs[kind].id, version: 1, kind: defs[kind].kind });
      close(c.difference, w.difference, `${kind} difference`);
      close(c.tau_squared, w.tau_squared, `${kind} tau2`);
      close(c.always_valid_p_value, w.always_valid_p_value, `${kind} p`);
      close(c.confidence_sequence.lower, w.lower, `${kind} lower`);
      close(c.confidence_sequence.upper, w.upper, `${kind} upper`);
    }
    // The primary metric (capped mean) is the default.
    expect((await d.get(`/api/v1/results/${e.id}/sequential`)).sequential.definition.metric_definition_id).toBe(defs.capped.id);
    const p90 = e.metrics.find((x: Json) => x.metric_definition_id === defs.p90.id);
    expect(await d.get(`/api/v1/results/${e.id}/sequential?metric_id=${p90.id}`)).toMatchObject({ sequential: null, unavailable_reason: 'not_defined_for_quantiles' });
  });

  it('Bayesian (normal model on the relative effect) of the capped mean and the ratio', async () => {
    const { e, expected } = runs[0];
    for (const kind of ['capped', 'ratio']) {
      const m = e.metrics.find((x: Json) => x.metric_definition_id === defs[kind].id);
      const r = await d.get(`/api/v1/results/${e.id}/bayesian?metric_id=${m.id}`);
      const w = expected.bayesian[kind];
      expect(r.definition).toMatchObject({ metric_definition_id: defs[kind].id, model: 'normal' });
      close(r.variants[1].prob_beat_control, w.prob_beat_control, `${kind} prob`);
      close(r.variants[1].expected_loss, w.expected_loss, `${kind} loss`);
      close(r.variants[1].rope_probability, w.rope_probability, `${kind} rope`);
      close(r.variants[0].credible_interval.lower, w.control_interval[0], `${kind} control interval`);
      close(r.variants[1].credible_interval.upper, w.treatment_interval[1], `${kind} treatment interval`);
    }
  });

  it('sample size of the capped mean and the ratio', async () => {
    for (const { e, expected } of runs) {
      for (const kind of ['capped', 'ratio']) {
        const m = e.metrics.find((x: Json) => x.metric_definition_id === defs[kind].id);
        const r = await d.get(`/api/v1/results/${e.id}/sample-size?metric_id=${m.id}`);
        const w = expected.sample_size[kind];
        expect(r).toMatchObject({ analysed_as: kind === 'ratio' ? 'ratio' : 'mean', unavailable_reason: null, required_sample_size_per_variant: w.required });
        close(r.achieved_power, w.achieved_power, `${kind} power`);
        close(r.baseline_value, w.baseline_value, `${kind} baseline`);
        close(r.baseline_std_dev, w.baseline_std_dev, `${kind} sd`);
      }
    }
  });

  it('CUPED of the capped mean and of the ratio (delta method) with pre-exposure visits', async () => {
    const { e, expected } = runs[0];
    const r = await d.get(`/api/v1/results/${e.id}/cuped`);
    expect(r.unavailable_reason).toBeNull();
    for (const kind of ['capped', 'ratio']) {
      const m = r.metrics.find((x: Json) => x.definition?.metric_definition_id === defs[kind].id);
      const c = m.comparisons[0];
      const w = expected.cuped[kind];
      expect(c.unavailable_reason).toBeNull();
      for (const [field, want] of [['theta', w.theta], ['adjusted_effect', w.adjusted_effect], ['p_value', w.p_value], ['variance_reduction', w.variance_reduction]] as const) {
        close(c[field], want, `${kind} ${field}`);
      }
      close(c.confidence_interval.lower, w.ci_lower, `${kind} ci`);
      close(c.confidence_interval.upper, w.ci_upper, `${kind} ci`);
    }
    const p90 = r.metrics.find((x: Json) => x.definition?.metric_definition_id === defs.p90.id);
    expect(p90.comparisons[0].unavailable_reason).toBe('not_defined_for_quantiles');
  });
});
