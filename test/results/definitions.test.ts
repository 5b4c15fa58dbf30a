/**
 * Results of metrics that name metric library definitions (issue 32): proportion, mean, ratio (delta method), capped
 * mean and p90, each number checked against an independent computation from the events this test tracked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjust, compareQuantiles, compareRatios, fisherExactTwoSided, quantileSummary, summaryFromSums, welchTTest } from '../../src/stats/index.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { definitionEvents, Driver, numpyPercentile, type Json, type TrackedEvent } from './helpers.js';

let t: TestApp;
let dev: TestUser;
let analyst: TestUser;
let d: Driver;

beforeAll(async () => {
  t = await testApp();
  [dev, analyst] = await Promise.all([t.user({ role: 'DEVELOPER' }), t.user({ role: 'ANALYST' })]);
  d = new Driver(t, dev, (await t.apiKey(dev, ['sdk:ruleset'])).headers);
});
afterAll(() => t.close());

async function define(body: Json): Promise<Json> {
  const res = await t.call('POST', '/api/v1/metric-definitions', analyst, { ...body, name: t.unique(body.name) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const sumSq = (xs: number[]) => xs.reduce((a, b) => a + b * b, 0);

/** Per user, the count and value sum of each event name among `events`. */
function perUser(events: TrackedEvent[]) {
  const out = new Map<string, Map<string, { count: number; sum: number }>>();
  for (const e of events) {
    const user = out.get(e.user_id) ?? new Map();
    const a = user.get(e.event_type) ?? { count: 0, sum: 0 };
    a.count += 1;
    a.sum += e.value ?? 0;
    user.set(e.event_type, a);
    out.set(e.user_id, user);
  }
  return out;
}

describe('results of metric library definitions', () => {
  let defs: Record<string, Json>;
  let exp: Json;
  let other: Json;
  let assigned: Map<string, string>;
  let events: TrackedEvent[];
  let control: string;
  let treatment: string;

  beforeAll(async () => {
    defs = {
      proportion: await define({ name: 'Purchased', kind: 'proportion', event_name: 'purchase' }),
      mean: await define({ name: 'Revenue per user', kind: 'mean', event_name: 'revenue', aggregate: 'sum' }),
      ratio: await define({
        name: 'Revenue per page view', kind: 'ratio',
        numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'page_view', aggregate: 'count' },
      }),
      capped: await define({ name: 'Capped revenue', kind: 'mean', event_name: 'revenue', aggregate: 'sum', capping: { type: 'percentile', p: 0.9 } }),
      high: await define({ name: 'Revenue capped high', kind: 'mean', event_name: 'revenue', aggregate: 'sum', capping: { type: 'absolute', value: 1e9 } }),
      p90: await define({ name: 'p90 load time', kind: 'quantile', event_name: 'load_time', aggregate: 'sum', quantile: 0.9 }),
    };
    const metric = (name: string, def: Json, extra: Json = {}) => ({ name, event_name: 'purchase', metric_definition_id: def.id, ...extra });
    exp = await d.experiment({
      metrics: [
        { name: 'Inline purchase', event_name: 'purchase', metric_type: 'conversion', is_primary: true },
        metric('Purchased', defs.proportion),
        metric('Revenue', defs.mean, { metric_type: 'revenue' }),
        metric('Revenue per page view', defs.ratio),
        metric('Capped revenue', defs.capped),
        metric('Revenue capped high', defs.high),
        metric('p90 load time', defs.p90),
      ],
    });
    // The proportion definition is used by a second experiment too.
    other = await d.experiment({ metrics: [{ name: 'Purchased', event_name: 'purchase', metric_definition_id: defs.proportion.id, is_primary: true }] });
    control = exp.variants.find((v: Json) => v.is_control).id;
    treatment = exp.variants.find((v: Json) => !v.is_control).id;
    const users = Array.from({ length: 400 }, (_, i) => `u${i}`);
    assigned = await d.assign(exp.key, users);
    events = definitionEvents(users, assigned, treatment, exp.key);
    // Events of users never assigned count nowhere.
    events.push({ event_type: 'revenue', user_id: 'stranger', experiment_key: exp.key, value: 99_999 });
    await d.track(events);
    const otherAssigned = await d.assign(other.key, users.slice(0, 60));
    await d.track([...otherAssigned.keys()].filter((_, i) => i % 2 === 0).map((u) => ({ event_type: 'purchase', user_id: u, experiment_key: other.key })));
  });

  /** Per variant, every assigned user's (count, sum) of an event (0 without events). */
  function valuesOf(variant: string, eventName: string, aggregate: 'count' | 'sum'): number[] {
    const users = perUser(events.filter((e) => assigned.has(e.user_id)));
    return [...assigned].filter(([, v]) => v === variant).map(([u]) => users.get(u)?.get(eventName)?.[aggregate] ?? 0);
  }
  const metricOf = (payload: Json, defId: string) => payload.metrics.find((m: Json) => m.definition?.metric_definition_id === defId);
  const armOf = (m: Json, variant: string) => m.variants.find((v: Json) => v.variant_id === variant);
  const defArmOf = (m: Json, variant: string) => m.definition.variants.find((v: Json) => v.variant_id === variant);

  it('inline metrics carry no definition block; every definition metric records the definition and its version', async () => {
    const payload = await d.get(`/api/v1/results/${exp.id}`);
    expect(payload.metrics).toHaveLength(7);
    expect(payload.metrics[0].definition).toBeUndefined();
    expect(payload.metrics[0].test).toBe('fisher_exact');
    for (const def of Object.values(defs)) {
      const m = metricOf(payload, def.id);
      expect(m.definition).toMatchObject({ metric_definition_id: def.id, version: 1, kind: def.kind });
    }
  });

  it('proportion: Fisher on users with an event, as an inline conversion metric', async () => {
    const payload = await d.get(`/api/v1/results/${exp.id}`);
    const m = metricOf(payload, defs.proportion.id);
    const conv = (v: string) => valuesOf(v, 'purchase', 'count').filter((x) => x > 0).length;
    const n = (v: string) => valuesOf(v, 'purchase', 'count').length;
    expect(m.test).toBe('fisher_exact');
    expect(armOf(m, control)).toMatchObject({ sample_size: n(control), conversions: conv(control) });
    expect(armOf(m, control).mean).toBeCloseTo(conv(control) / n(control), 12);
    expect(armOf(m, treatment).p_value).toBeCloseTo(fisherExactTwoSided(conv(control), n(control), conv(treatment), n(treatment))!, 12);
    // The same numbers as the inline conversion metric on the same event.
    expect(armOf(m, treatment).p_value).toBeCloseTo(armOf(payload.metrics[0], treatment).p_value, 12);
    // Used by a second experiment: analysed there on its own users.
    const second = await d.get(`/api/v1/results/${other.id}`);
    const sm = second.metrics[0];
    expect(sm.definition).toMatchObject({ metric_definition_id: defs.proportion.id, version: 1 });
    expect(sm.variants.reduce((a: number, v: Json) => a + v.sample_size, 0)).toBe(60);
    expect(sm.variants.reduce((a: number, v: Json) => a + v.conversions, 0)).toBe(30);
  });

  it('mean: Welch on per-user sums (zeros for users without events), with the absolute difference and its interval', async () => {
    const payload = await d.get(`/api/v1/results/${exp.id}`);
    const m = metricOf(payload, defs.mean.id);
    const c = valuesOf(control, 'revenue', 'sum');
    const tr = valuesOf(treatment, 'revenue', 'sum');
    const w = welchTTest(summaryFromSums(c.length, sum(c), sumSq(c)), summaryFromSums(tr.length, sum(tr), sumSq(tr)), 0.95);
    expect(m.test).toBe('welch_t');
    expect(armOf(m, control).mean).toBeCloseTo(sum(c) / c.length, 9);
    expect(armOf(m, treatment).p_value).toBeCloseTo(w.p_value, 12);
    expect(armOf(m, treatment).relative_lift).toBeCloseTo(sum(tr) / tr.length / (sum(c) / c.length) - 1, 12);
    const dv = defArmOf(m, treatment);
    expect(dv.difference).toBeCloseTo(w.difference!, 9);
    expect(dv.difference_ci.lower).toBeCloseTo(w.ci_lower!, 9);
    expect(dv.difference_ci.upper).toBeCloseTo(w.ci_upper!, 9);
    expect(m.definition.capping).toBeNull();
    expect(defArmOf(m, control).difference).toBeNull();
  });

  it('ratio: delta method on per-user numerator and denominator', async () => {
    const payload = await d.get(`/api/v1/results/${exp.id}`);
    const m = metricOf(payload, defs.ratio.id);
    const stats = (v: string) => {
      const x = valuesOf(v, 'revenue', 'sum');
      const y = valuesOf(v, 'page_view', 'count');
      return { n: x.length, sum_x: sum(x), sum_y: sum(y), sum_x2: sumSq(x), sum_y2: sumSq(y), sum_xy: x.reduce((a, xi, i) => a + xi * y[i], 0) };
    };
    const sc = stats(control);
    const st = stats(treatment);
    const r = compareRatios(sc, st, 0.95);
    expect(m.test).toBe('delta_method');
    expect(armOf(m, control).mean).toBeCloseTo(sc.sum_x / sc.sum_y, 12);
    expect(armOf(m, treatment).mean).toBeCloseTo(st.sum_x / st.sum_y, 12);
    expect(armOf(m, treatment).p_value).toBeCloseTo(r.p_value, 12);
    expect(armOf(m, treatment).adjusted_p_value).toBeCloseTo(adjust([r.p_value], exp.correction_method)[0], 12);
    expect(armOf(m, treatment).relative_lift).toBeCloseTo(st.sum_x / st.sum_y / (sc.sum_x / sc.sum_y) - 1, 12);
    expect(armOf(m, treatment).confidence_interval.lower).toBeCloseTo(r.relative_ci_lower!, 12);
    const dv = defArmOf(m, treatment);
    expect(dv.difference).toBeCloseTo(st.sum_x / st.sum_y - sc.sum_x / sc.sum_y, 12);
    expect(dv.difference_ci.lower).toBeCloseTo(r.ci_lower!, 12);
    expect(dv.difference_ci.upper).toBeCloseTo(r.ci_upper!, 12);
    expect(dv.unavailable_reason).toBeNull();
    // Sequential testing and CUPED are defined for ratios (the delta method's), so no reason is given.
    expect(m.definition).toMatchObject({ sequential_unavailable_reason: null, cuped_unavailable_reason: null });
  });

  it('capped mean: winsorized at the pooled 90th percentile, the cap and the users touched reported', async () => {
    const payload = await d.get(`/api/v1/results/${exp.id}`);
    const m = metricOf(payload, defs.capped.id);
    const c = valuesOf(control, 'revenue', 'sum');
    const tr = valuesOf(treatment, 'revenue', 'sum');
    const cap = numpyPercentile([...c, ...tr], 0.9);
    const touched = [...c, ...tr].filter((x) => x > cap).length;
    expect(touched).toBeGreaterThan(0);
    expect(m.definition.capping).toEqual({ type: 'percentile', p: 0.9, cap: expect.any(Number), users_capped: touched });
    expect(m.definition.capping.cap).toBeCloseTo(cap, 12);
    const cc = c.map((x) => Math.min(x, cap));
    const ct = tr.map((x) => Math.min(x, cap));
    const w = welchTTest(summaryFromSums(cc.length, sum(cc), sumSq(cc)), summaryFromSums(ct.length, sum(ct), sumSq(ct)), 0.95);
    expect(armOf(m, control).mean).toBeCloseTo(sum(cc) / cc.length, 9);
    expect(armOf(m, treatment).p_value).toBeCloseTo(w.p_value, 12);
    expect(defArmOf(m, control).users_capped + defArmOf(m, treatment).users_capped).toBe(touched);
    // Capping changed the answer: the uncapped mean differs.
    expect(armOf(m, control).mean).not.toBeCloseTo(armOf(metricOf(payload, defs.mean.id), control).mean, 6);
  });

  it('a cap above every value equals the uncapped metric', async () => {
    const payload = await d.get(`/api/v1/results/${exp.id}`);
    const high = metricOf(payload, defs.high.id);
    const plain = metricOf(payload, defs.mean.id);
    expect(high.definition.capping).toEqual({ type: 'absolute', p: null, cap: 1e9, users_capped: 0 });
    const strip = (m: Json) => ({ variants: m.variants, definition_variants: m.definition.variants });
    expect(strip(high)).toEqual(strip(plain));
  });

  it('p90: the order-statistic comparison of per-user values of users with events', async () => {
    const payload = await d.get(`/api/v1/results/${exp.id}`);
    const m = metricOf(payload, defs.p90.id);
    const withEvents = (v: string) => {
      const users = perUser(events.filter((e) => assigned.get(e.user_id) === v && e.event_type === 'load_time'));
      return [...users.values()].map((u) => u.get('load_time')!.sum);
    };
    const c = withEvents(control);
    const tr = withEvents(treatment);
    const q = compareQuantiles(quantileSummary(c, 0.9)!, quantileSummary(tr, 0.9)!, 0.9, 0.95);
    expect(q.reason).toBeNull();
    expect(m.test).toBe('quantile_order_statistic');
    expect(m.definition.quantile).toBe(0.9);
    expect(armOf(m, control).mean).toBeCloseTo(numpyPercentile(c, 0.9), 12);
    expect(armOf(m, treatment).mean).toBeCloseTo(numpyPercentile(tr, 0.9), 12);
    expect(defArmOf(m, treatment).users_with_events).toBe(tr.length);
    const dv = defArmOf(m, treatment);
    expect(dv.difference).toBeCloseTo(numpyPercentile(tr, 0.9) - numpyPercentile(c, 0.9), 12);
    expect(dv.difference_ci.lower).toBeCloseTo(q.ci_lower!, 12);
    expect(dv.relative_ci.upper).toBeCloseTo(q.relative_ci_upper!, 12);
    expect(armOf(m, treatment).p_value).toBeCloseTo(q.p_value, 12);
    expect(m.definition).toMatchObject({ sequential_unavailable_reason: 'not_defined_for_quantiles', cuped_unavailable_reason: 'not_defined_for_quantiles' });
  });

  it('an edit of a definition takes effect at the next analysis, with its new version recorded', async () => {
    const before = metricOf(await d.get(`/api/v1/results/${exp.id}`), defs.high.id);
    expect(before.definition.version).toBe(1);
    const res = await t.call('PUT', `/api/v1/metric-definitions/${defs.high.id}`, analyst, { capping: { type: 'absolute', value: 20 } });
    expect(res.statusCode, res.body).toBe(200);
    const after = metricOf(await d.get(`/api/v1/results/${exp.id}`), defs.high.id);
    expect(after.definition.version).toBe(2);
    const all = [...valuesOf(control, 'revenue', 'sum'), ...valuesOf(treatment, 'revenue', 'sum')];
    expect(after.definition.capping).toEqual({ type: 'absolute', p: null, cap: 20, users_capped: all.filter((x) => x > 20).length });
    const c = valuesOf(control, 'revenue', 'sum').map((x) => Math.min(x, 20));
    expect(armOf(after, control).mean).toBeCloseTo(sum(c) / c.length, 9);
  });
});

describe('definition metrics count by the results counting rule', () => {
  it('flag-tagged events count, events before the assignment do not, users with a conflicting exposure leave: as inline metrics', async () => {
    const mean = await define({ name: 'Revenue (rule)', kind: 'mean', event_name: 'revenue', aggregate: 'sum' });
    const proportion = await define({ name: 'Revenue users (rule)', kind: 'proportion', event_name: 'revenue' });
    const e = await d.experiment({
      metrics: [
        { name: 'Inline revenue', event_name: 'revenue', metric_type: 'revenue', is_primary: true },
        { name: 'Inline converted', event_name: 'revenue', metric_type: 'conversion' },
        { name: 'Defined revenue', event_name: 'revenue', metric_definition_id: mean.id },
        { name: 'Defined converted', event_name: 'revenue', metric_definition_id: proportion.id },
      ],
    });
    const flag = await t.call('POST', '/api/v1/feature-flags/', dev, { key: t.unique('flag'), name: 'Rule flag', is_active: true, rollout_percentage: 100 });
    expect(flag.statusCode, flag.body).toBe(201);
    const users = Array.from({ length: 40 }, (_, i) => t.unique(`r${i}`));
    // Events before the assignment: not counted.
    await d.track(users.slice(0, 10).map((u) => ({ event_type: 'revenue', user_id: u, experiment_key: e.key, value: 1000 })));
    const assigned = await d.assign(e.key, users);
    const [control, treatment] = [e.variants.find((v: Json) => v.is_control).id, e.variants.find((v: Json) => !v.is_control).id];
    await d.track(users.flatMap((u, i): TrackedEvent[] => i % 3 === 0 ? [] : [
      i % 2 === 0
        ? { event_type: 'revenue', user_id: u, experiment_key: e.key, value: 10 + i }
        : { event_type: 'revenue', user_id: u, feature_flag_key: flag.json().key, value: 5 + i },
    ]));
    // Two users exposed to the other variant: excluded from every metric.
    for (const u of users.slice(0, 2)) {
      const res = await t.inject({
        method: 'POST', url: '/api/v1/tracking/events', headers: d.key,
        payload: { event_type: 'revenue', user_id: u, experiment_id: e.id, variant_id: assigned.get(u) === control ? treatment : control, value: 7 },
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const payload = await d.get(`/api/v1/results/${e.id}`);
    const [inlineRevenue, inlineConverted, definedRevenue, definedConverted] = payload.metrics;
    expect(payload.diagnostics.excluded_users).toBe(2);
    expect(definedRevenue.variants).toEqual(inlineRevenue.variants);
    expect(definedConverted.variants).toEqual(inlineConverted.variants);
    // Nothing tracked before the assignment counted (1,000 per early user would dominate the mean).
    const total = inlineRevenue.variants.reduce((a: number, v: Json) => a + v.mean * v.sample_size, 0);
    expect(total).toBeLessThan(1000);
    expect(inlineRevenue.variants.reduce((a: number, v: Json) => a + v.sample_size, 0)).toBe(38);
  });
});
