/**
 * Metric library definitions in the segmented results (and the results breakdown) and the daily series: each segment
 * and each day analysed per the definition, as the results payload analyses the whole experiment. The segment counts
 * route (GET /results/{id}/segments/{segment_by}) gives each segment and variant the definition's value (proportion
 * rate, capped mean with the segment's pooled percentile cap, ratio of sums, p-th quantile), computed here from the
 * events this test tracked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { compareRatios, welchTTest, summaryFromSums } from '../../src/stats/index.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { definitionEvents, Driver, numpyPercentile, type Json, type TrackedEvent } from './helpers.js';

const DAY = 86_400_000;
const clock = fixedClock(new Date('2031-05-01T09:00:00.000Z'));
let t: TestApp;
let dev: TestUser;
let d: Driver;

beforeAll(async () => {
  t = await testApp({ clock, env: { ACCESS_TOKEN_EXPIRE_MINUTES: '525600' } });
  dev = await t.user({ role: 'DEVELOPER' });
  d = new Driver(t, dev, (await t.apiKey(dev, ['sdk:ruleset'])).headers);
});
afterAll(() => t.close());

const define = async (body: Json) => (await t.call('POST', '/api/v1/metric-definitions', dev, { ...body, name: t.unique(body.name) })).json();
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const sumSq = (xs: number[]) => xs.reduce((a, b) => a + b * b, 0);

describe('definition metrics per segment and per day', () => {
  let e: Json;
  let mean: Json;
  let ratio: Json;
  let assigned: Map<string, string>;
  const country = (u: string) => (Number(u.split('-')[1]) % 3 === 0 ? 'fr' : 'de');
  /** Per user and day index, (revenue, page views). */
  const activity = (u: string, day: number) => {
    const i = Number(u.split('-')[1]);
    return { revenue: (i * 7 + day * 3) % 5 === 0 ? 0 : 5 + ((i * 13 + day) % 30), views: 1 + ((i + day) % 3) };
  };

  beforeAll(async () => {
    mean = await define({ name: 'Revenue', kind: 'mean', event_name: 'revenue', aggregate: 'sum' });
    ratio = await define({
      name: 'Revenue per view', kind: 'ratio',
      numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'page_view', aggregate: 'count' },
    });
    e = await d.experiment({
      metrics: [
        { name: 'Revenue', event_name: 'revenue', metric_definition_id: mean.id, is_primary: true },
        { name: 'Revenue per view', event_name: 'revenue', metric_definition_id: ratio.id },
      ],
    });
    const users = Array.from({ length: 160 }, (_, i) => `${e.key}-${i}`);
    assigned = await d.assign(e.key, users, (u) => ({ country: country(u) }));
    for (const day of [0, 1]) {
      if (day === 1) clock.advance(DAY);
      await d.track(users.flatMap((u): TrackedEvent[] => {
        const a = activity(u, day);
        return [
          ...Array.from({ length: a.views }, () => ({ event_type: 'page_view', user_id: u, experiment_key: e.key })),
          ...(a.revenue > 0 ? [{ event_type: 'revenue', user_id: u, experiment_key: e.key, value: a.revenue }] : []),
        ];
      }));
    }
  });

  /** Per variant, each user's (revenue, views) summed over the days up to `lastDay`, of the users `keep` selects. */
  function arms(lastDay: number, keep: (u: string) => boolean = () => true) {
    const control = e.variants.find((v: Json) => v.is_control).id;
    const treatment = e.variants.find((v: Json) => !v.is_control).id;
    const of = (variant: string) => [...assigned].filter(([u, v]) => v === variant && keep(u)).map(([u]) => {
      const days = [0, 1].filter((day) => day <= lastDay).map((day) => activity(u, day));
      return { x: sum(days.map((a) => a.revenue)), y: sum(days.map((a) => a.views)) };
    });
    return { c: of(control), t: of(treatment) };
  }
  const welch = (c: number[], tr: number[]) => welchTTest(summaryFromSums(c.length, sum(c), sumSq(c)), summaryFromSums(tr.length, sum(tr), sumSq(tr)), 0.95);
  const ratioStats = (rows: Array<{ x: number; y: number }>) => ({
    n: rows.length, sum_x: sum(rows.map((r) => r.x)), sum_y: sum(rows.map((r) => r.y)), sum_x2: sumSq(rows.map((r) => r.x)),
    sum_y2: sumSq(rows.map((r) => r.y)), sum_xy: sum(rows.map((r) => r.x * r.y)),
  });

  it('segmented results: each segment analysed per the definition, Bonferroni over the segments', async () => {
    const r = await d.get(`/api/v1/experiments/${e.id}/segmented-results/country`);
    expect(r.segments.map((s: Json) => s.segment).sort()).toEqual(['de', 'fr']);
    for (const s of r.segments) {
      const { c, t: tr } = arms(1, (u) => country(u) === s.segment);
      const m = s.metrics.find((x: Json) => x.definition?.metric_definition_id === mean.id);
      const w = welch(c.map((a) => a.x), tr.map((a) => a.x));
      expect(m.variants[1].p_value).toBeCloseTo(w.p_value, 12);
      expect(m.variants[1].adjusted_p_value).toBeCloseTo(Math.min(1, 2 * w.p_value), 12);
      expect(m.definition.variants[1].difference).toBeCloseTo(w.difference!, 9);
      const rm = s.metrics.find((x: Json) => x.definition?.metric_definition_id === ratio.id);
      const q = compareRatios(ratioStats(c), ratioStats(tr), 0.95);
      expect(rm.test).toBeUndefined();
      expect(rm.variants[1].p_value).toBeCloseTo(q.p_value, 12);
      expect(rm.definition.variants[1].difference_ci.lower).toBeCloseTo(q.ci_lower!, 12);
    }
    // The results breakdown carries the same segments.
    const withBreakdown = await d.get(`/api/v1/results/${e.id}?breakdown=country`);
    expect(withBreakdown.breakdown.segments).toEqual(r.segments);
  });

  it('daily results: each day the users values cumulated to its end, the last day as the results', async () => {
    const daily = await d.get(`/api/v1/experiments/${e.id}/daily-results`);
    const m = daily.metrics.find((x: Json) => x.metric_id === e.metrics[1].id);
    expect(m.definition).toEqual({ metric_definition_id: ratio.id, version: 1, kind: 'ratio' });
    expect(m.days).toHaveLength(2);
    for (const [day, entry] of m.days.entries()) {
      const { c, t: tr } = arms(day);
      const q = compareRatios(ratioStats(c), ratioStats(tr), 0.95);
      expect(entry.variants[0].mean).toBeCloseTo(ratioStats(c).sum_x / ratioStats(c).sum_y, 12);
      expect(entry.variants[1].p_value).toBeCloseTo(q.p_value, 12);
      expect(entry.variants[1].difference).toBeCloseTo(q.difference!, 12);
      expect(entry.variants[1].relative_ci.upper).toBeCloseTo(q.relative_ci_upper!, 12);
    }
    const results = await d.get(`/api/v1/results/${e.id}`);
    const last = m.days[1].variants[1];
    const r = results.metrics[1];
    expect(last.p_value).toBe(r.variants[1].p_value);
    expect(last.difference).toBe(r.definition.variants[1].difference);
  });
});

describe('segment counts of metric library definitions', () => {
  let defs: Record<string, Json>;
  let exp: Json;
  let assigned: Map<string, string>;
  let events: TrackedEvent[];
  const country = (u: string) => {
    const i = Number(u.split('-').pop());
    return i % 7 === 0 ? null : i % 3 === 0 ? 'fr' : 'de';
  };

  beforeAll(async () => {
    defs = {
      proportion: await define({ name: 'Purchased', kind: 'proportion', event_name: 'purchase' }),
      capped: await define({ name: 'Capped revenue', kind: 'mean', event_name: 'revenue', aggregate: 'sum', capping: { type: 'percentile', p: 0.9 } }),
      ratio: await define({
        name: 'Revenue per page view', kind: 'ratio',
        numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'page_view', aggregate: 'count' },
      }),
      p90: await define({ name: 'p90 load time', kind: 'quantile', event_name: 'load_time', aggregate: 'sum', quantile: 0.9 }),
    };
    const metric = (name: string, def: Json) => ({ name, event_name: 'purchase', metric_definition_id: def.id });
    exp = await d.experiment({
      metrics: [
        { name: 'Inline purchase', event_name: 'purchase', metric_type: 'conversion', is_primary: true },
        metric('Purchased', defs.proportion),
        metric('Capped revenue', defs.capped),
        metric('Revenue per page view', defs.ratio),
        metric('p90 load time', defs.p90),
      ],
    });
    const users = Array.from({ length: 300 }, (_, i) => `${exp.key}-${i}`);
    assigned = await d.assign(exp.key, users, (u) => {
      const c = country(u);
      return c === null ? {} : { country: c };
    });
    const treatment = exp.variants.find((v: Json) => !v.is_control).id;
    events = definitionEvents(users, assigned, treatment, exp.key);
    await d.track(events);
  });

  /** Per user of the segment and variant, (count, sum) of an event (0 without events). */
  function valuesOf(segment: string | null, variant: string, eventName: string, aggregate: 'count' | 'sum'): number[] {
    return [...assigned].filter(([u, v]) => v === variant && country(u) === segment).map(([u]) => {
      const own = events.filter((e) => e.user_id === u && e.event_type === eventName);
      return aggregate === 'count' ? own.length : sum(own.map((e) => e.value ?? 0));
    });
  }
  const metricOf = (entry: Json, def: Json) => entry.metrics.find((m: Json) => m.metric_id === exp.metrics.find((x: Json) => x.metric_definition_id === def.id).id);

  it('each segment and variant: the definition value, version and users with events; counts of event_name unchanged', async () => {
    const r = await d.get(`/api/v1/results/${exp.id}/segments/country`);
    expect(r.segments.map((s: Json) => s.segment).sort()).toEqual(['de', 'fr', null]);
    for (const s of r.segments) {
      for (const v of s.variants) {
        const inline = v.metrics[0];
        expect(inline.definition).toBeUndefined();
        for (const def of Object.values(defs)) {
          const m = metricOf(v, def);
          expect(m.definition).toMatchObject({ metric_definition_id: def.id, version: 1, kind: def.kind });
          // The fields the route had keep counting the metric's event_name, as the inline metric on it.
          expect({ conversions: m.conversions, events: m.events, value_sum: m.value_sum }).toEqual(
            { conversions: inline.conversions, events: inline.events, value_sum: inline.value_sum });
        }

        const purchases = valuesOf(s.segment, v.variant_id, 'purchase', 'count');
        const proportion = metricOf(v, defs.proportion).definition;
        expect(proportion.users_with_events).toBe(purchases.filter((x) => x > 0).length);
        expect(proportion.value).toBeCloseTo(purchases.filter((x) => x > 0).length / purchases.length, 12);
        expect(proportion.capping).toBeNull();

        const revenue = valuesOf(s.segment, v.variant_id, 'revenue', 'sum');
        const views = valuesOf(s.segment, v.variant_id, 'page_view', 'count');
        const ratio = metricOf(v, defs.ratio).definition;
        expect(ratio.value).toBeCloseTo(sum(revenue) / sum(views), 12);
        expect(ratio.users_with_events).toBe(revenue.filter((x) => x > 0).length);

        const loads = valuesOf(s.segment, v.variant_id, 'load_time', 'sum').filter((_, i) => valuesOf(s.segment, v.variant_id, 'load_time', 'count')[i] > 0);
        const p90 = metricOf(v, defs.p90).definition;
        expect(p90.value).toBeCloseTo(numpyPercentile(loads, 0.9), 12);
        expect(p90.users_with_events).toBe(loads.length);
      }
    }
  });

  it('capped mean: the cap is the segment pooled 90th percentile, the users it touched per variant', async () => {
    const r = await d.get(`/api/v1/results/${exp.id}/segments/country`);
    const caps = new Set<number>();
    for (const s of r.segments) {
      const all = s.variants.flatMap((v: Json) => valuesOf(s.segment, v.variant_id, 'revenue', 'sum'));
      const cap = numpyPercentile(all, 0.9);
      caps.add(cap);
      for (const v of s.variants) {
        const revenue = valuesOf(s.segment, v.variant_id, 'revenue', 'sum');
        const m = metricOf(v, defs.capped).definition;
        expect(m.capping).toEqual({ type: 'percentile', p: 0.9, cap: expect.any(Number), users_capped: revenue.filter((x) => x > cap).length });
        expect(m.capping.cap).toBeCloseTo(cap, 12);
        expect(m.value).toBeCloseTo(sum(revenue.map((x) => Math.min(x, cap))) / revenue.length, 9);
        expect(m.users_with_events).toBe(revenue.filter((x) => x > 0).length);
      }
    }
    expect([...r.segments.flatMap((s: Json) => s.variants.map((v: Json) => metricOf(v, defs.capped).definition.capping.users_capped))].some((n) => n > 0)).toBe(true);
    expect(caps.size).toBeGreaterThan(1);
  });

  it('the values are those of the segmented results, and metric_id narrows to one definition metric', async () => {
    const counts = await d.get(`/api/v1/results/${exp.id}/segments/country`);
    const tested = await d.get(`/api/v1/experiments/${exp.id}/segmented-results/country`);
    for (const s of counts.segments) {
      const same = tested.segments.find((x: Json) => x.segment === s.segment);
      for (const def of Object.values(defs)) {
        const block = same.metrics.find((m: Json) => m.definition?.metric_definition_id === def.id).definition;
        for (const v of s.variants) {
          const mine = metricOf(v, def).definition;
          const theirs = block.variants.find((x: Json) => x.variant_id === v.variant_id);
          expect(mine.value).toBe(theirs.value);
          expect(mine.users_with_events).toBe(theirs.users_with_events);
        }
      }
    }
    const ratioMetric = exp.metrics.find((m: Json) => m.metric_definition_id === defs.ratio.id);
    const one = await d.get(`/api/v1/results/${exp.id}/segments/country?metric_id=${ratioMetric.id}`);
    expect(one.metric_id).toBe(ratioMetric.id);
    for (const s of one.segments) {
      for (const v of s.variants) {
        expect(v.metrics).toHaveLength(1);
        expect(v.metrics[0].definition).toEqual(metricOf(counts.segments.find((x: Json) => x.segment === s.segment).variants
          .find((x: Json) => x.variant_id === v.variant_id), defs.ratio).definition);
      }
    }
  });

  it('an edit of a definition shows at the next read, cached or not, with its new version', async () => {
    const url = `/api/v1/results/${exp.id}/segments/country`;
    const before = await d.get(url);
    expect(metricOf(before.segments[0].variants[0], defs.capped).definition.version).toBe(1);
    const res = await t.call('PUT', `/api/v1/metric-definitions/${defs.capped.id}`, dev, { capping: { type: 'absolute', value: 20 } });
    expect(res.statusCode, res.body).toBe(200);
    const after = await d.get(url);
    for (const s of after.segments) {
      for (const v of s.variants) {
        const revenue = valuesOf(s.segment, v.variant_id, 'revenue', 'sum');
        const m = metricOf(v, defs.capped).definition;
        expect(m).toMatchObject({ version: 2, capping: { type: 'absolute', p: null, cap: 20, users_capped: revenue.filter((x) => x > 20).length } });
        expect(m.value).toBeCloseTo(sum(revenue.map((x) => Math.min(x, 20))) / revenue.length, 9);
      }
    }
  });
});
