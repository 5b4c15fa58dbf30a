/**
 * Metric library definitions in the segmented results (and the results breakdown) and the daily series: each segment
 * and each day analysed per the definition, as the results payload analyses the whole experiment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { compareRatios, welchTTest, summaryFromSums } from '../../src/stats/index.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { Driver, type Json, type TrackedEvent } from './helpers.js';

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
    const define = async (body: Json) => (await t.call('POST', '/api/v1/metric-definitions', dev, { ...body, name: t.unique(body.name) })).json();
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
