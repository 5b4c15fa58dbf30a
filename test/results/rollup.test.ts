import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { variantResults } from '../../src/analysis/compare.js';
import { judge } from '../../src/analysis/judgement.js';
import {
  addMetricDays, addWindowUserTotals, type MetricDay, metricDays, metricDeltasFromStart, metricDeltasWithUserTotals, metricWindowDeltas, replaceUserTotals,
  sumMetricDays, untaggedBefore, userRanges,
} from '../../src/modules/results/store.js';
import type { UserTotals, WindowUserTotal } from '../../src/modules/tracking/read-model.js';
import { insertAssignmentsIfAbsent, insertEvents, type EventRow } from '../../src/modules/tracking/store.js';
import { testApp, type TestApp } from '../helpers/test-app.js';
import { Driver, type Json } from './helpers.js';

let t: TestApp;
let e: Json;

beforeAll(async () => {
  t = await testApp();
  const dev = await t.user({ role: 'DEVELOPER' });
  e = await new Driver(t, dev, {}).experiment();
});
afterAll(() => t.close());

const BASE = Date.parse('2031-03-10T00:00:00Z');
const HOUR = 3_600_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Case {
  users: Array<{ variant: 0 | 1; assignedHour: number }>;
  events: Array<{ user: number; hour: number; value: number | null; kind: 'track' | 'view'; tag: 'this' | 'other' | 'flag' | 'none' }>;
  cuts: number[];
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  users: fc.array(fc.record({ variant: fc.constantFrom(0 as const, 1 as const), assignedHour: fc.integer({ min: 0, max: 72 }) }), { minLength: 1, maxLength: 4 }),
  events: fc.array(fc.record({
    user: fc.nat(),
    hour: fc.integer({ min: 0, max: 120 }),
    value: fc.option(fc.integer({ min: -5, max: 40 }), { nil: null, freq: 5 }),
    kind: fc.constantFrom('track' as const, 'track' as const, 'view' as const),
    tag: fc.constantFrom('this' as const, 'this' as const, 'other' as const, 'flag' as const, 'none' as const),
  }), { maxLength: 30 }),
  cuts: fc.uniqueArray(fc.integer({ min: 0, max: 120 }), { minLength: 1, maxLength: 3 }).map((c) => c.sort((a, b) => a - b)),
});

type Totals = { converters: number; eventCount: number; countSquares: number; valueSum: number; valueSquares: number };

/** The spec's counting rule applied directly: totals per variant as of the end of each day. */
function expected(c: Case, variantIds: string[], days: string[]): Map<string, Map<string, Totals>> {
  const out = new Map<string, Map<string, Totals>>();
  for (const d of days) {
    const perVariant = new Map<string, Totals>(variantIds.map((v) => [v, { converters: 0, eventCount: 0, countSquares: 0, valueSum: 0, valueSquares: 0 }]));
    c.users.forEach((u, i) => {
      const counted = c.events.filter((ev) => ev.user % c.users.length === i && ev.kind === 'track' && (ev.tag === 'this' || ev.tag === 'flag')
        && ev.hour >= u.assignedHour && day(BASE + ev.hour * HOUR) <= d);
      if (counted.length === 0) return;
      const tot = perVariant.get(variantIds[u.variant])!;
      const value = counted.reduce((s, ev) => s + (ev.value ?? 0), 0);
      tot.converters += 1;
      tot.eventCount += counted.length;
      tot.countSquares += counted.length ** 2;
      tot.valueSum += value;
      tot.valueSquares += value ** 2;
    });
    out.set(d, perVariant);
  }
  return out;
}

describe('incremental rollup', () => {
  it('rolled up in any windows, each over any ranges of users, plus the unrolled tail, gives the directly counted totals for every day', async () => {
    const variantIds = e.variants.map((v: Json) => v.id as string);
    await fc.assert(fc.asyncProperty(caseArb, fc.array(fc.nat({ max: 5 }), { maxLength: 3 }), async (c, splitAt) => {
      const run = randomUUID().slice(0, 8);
      const eventName = `ev-${run}`;
      const db = t.database.db;
      await insertAssignmentsIfAbsent(db, c.users.map((u, i) => ({
        id: randomUUID(), experimentId: e.id, variantId: variantIds[u.variant], userId: `${run}-${i}`, context: null, source: 'assign' as const,
        createdAt: new Date(BASE + u.assignedHour * HOUR),
      })));
      const rows: EventRow[] = c.events.map((ev) => ({
        id: randomUUID(), eventName, userId: `${run}-${ev.user % c.users.length}`,
        experimentId: ev.tag === 'this' ? e.id : ev.tag === 'other' ? randomUUID() : null,
        featureFlagId: ev.tag === 'flag' ? randomUUID() : null, variantId: null, value: ev.value, metadata: null, kind: ev.kind,
        createdAt: new Date(BASE + ev.hour * HOUR),
      }));
      await insertEvents(db, rows);
      // What the rollup job does with a window: its deltas over the ranges of users, added up to the rollup.
      const splits = [...new Set(splitAt.map((i) => `${run}-${i % c.users.length}`))].sort();
      // The first window from the start keeps every user's totals; each later one reads them and adds its own.
      let after: Date | null = null;
      for (const cut of c.cuts) {
        const upTo = new Date(BASE + cut * HOUR);
        const from = after;
        const parts: MetricDay[][] = [];
        const users: UserTotals[] = [];
        const windowUsers: WindowUserTotal[] = [];
        for (const range of userRanges(splits)) {
          if (from === null) {
            const untagged = await untaggedBefore(db, [eventName], upTo);
            const pass = await db.transaction((tx) => metricDeltasWithUserTotals(tx, e.id, eventName, upTo, { range, values: true, untagged, userTotals: { sums: true, ids: true, excluded: [] } }));
            parts.push(pass.days);
            users.push(...pass.users);
          } else {
            const window = await db.transaction((tx) => metricWindowDeltas(tx, e.id, [eventName], { after: from, upTo }, { range }));
            parts.push(window.days.get(eventName)!);
            windowUsers.push(...window.users);
          }
        }
        await db.transaction(async (tx) => {
          await addMetricDays(tx, e.id, eventName, sumMetricDays(parts));
          if (from === null) await replaceUserTotals(tx, e.id, eventName, users);
          else await addWindowUserTotals(tx, e.id, windowUsers);
        });
        after = upTo;
      }
      const found = (await metricDays(db, e.id, [eventName], after, [])).get(eventName)!;
      const days = [...new Set(c.events.map((ev) => day(BASE + ev.hour * HOUR)))].sort();
      const want = expected(c, variantIds, days);
      for (const d of days) {
        for (const v of variantIds) {
          const upToDay = found.filter((x) => x.variantId === v && x.day <= d);
          const sum = (k: keyof Totals) => upToDay.reduce((s, x) => s + (k === 'countSquares' ? x.countSquares : k === 'valueSquares' ? x.valueSquares : x[k]), 0);
          const got: Totals = { converters: sum('converters'), eventCount: sum('eventCount'), countSquares: sum('countSquares'), valueSum: sum('valueSum'), valueSquares: sum('valueSquares') };
          expect(got).toEqual(want.get(d)!.get(v));
        }
      }
    }), { numRuns: 100 });
  });
});

describe('ordered passes over ranges of users', () => {
  it('add up, with the excluded users subtracted, to the deltas of one pass over everyone (without values: the same, values 0)', async () => {
    const variantIds = e.variants.map((v: Json) => v.id as string);
    await fc.assert(fc.asyncProperty(caseArb, fc.array(fc.nat({ max: 5 }), { maxLength: 3 }), fc.array(fc.nat({ max: 5 }), { maxLength: 2 }), fc.boolean(), async (c, cuts, out, values) => {
      const run = randomUUID().slice(0, 8);
      const eventName = `ev-${run}`;
      const db = t.database.db;
      const userOf = (i: number) => `${run}-${i % c.users.length}`;
      await insertAssignmentsIfAbsent(db, c.users.map((u, i) => ({
        id: randomUUID(), experimentId: e.id, variantId: variantIds[u.variant], userId: userOf(i), context: null, source: 'assign' as const,
        createdAt: new Date(BASE + u.assignedHour * HOUR),
      })));
      await insertEvents(db, c.events.map((ev) => ({
        id: randomUUID(), eventName, userId: userOf(ev.user), experimentId: ev.tag === 'this' ? e.id : ev.tag === 'other' ? randomUUID() : null,
        featureFlagId: ev.tag === 'flag' ? randomUUID() : null, variantId: null, value: ev.value, metadata: null, kind: ev.kind,
        createdAt: new Date(BASE + ev.hour * HOUR),
      })));
      const excluded = [...new Set(out.map(userOf))];
      const splits = [...new Set(cuts.map(userOf))].sort();
      const whole = (await metricDays(db, e.id, [eventName], null, excluded)).get(eventName)!;
      const parts = [];
      const plan = { values, untagged: await untaggedBefore(db, [eventName], null) };
      for (const range of userRanges(splits)) parts.push(await db.transaction((tx) => metricDeltasFromStart(tx, e.id, eventName, null, { range, ...plan })));
      const minus = excluded.length === 0 ? [] : [await db.transaction((tx) => metricDeltasFromStart(tx, e.id, eventName, null, { users: excluded, ...plan }))];
      const key = (d: { variantId: string; day: string }) => `${d.day}/${d.variantId}`;
      // Rows that add nothing are left out, and -0 (a float product) is 0.
      const nonZero = (days: typeof whole) => days.filter((d) => d.converters !== 0 || d.eventCount !== 0 || d.valueSum !== 0 || d.valueSquares !== 0)
        .map((d) => ({ ...d, valueSum: values ? d.valueSum + 0 : 0, valueSquares: values ? d.valueSquares + 0 : 0, countSquares: d.countSquares + 0 }))
        .sort((a, b) => key(a).localeCompare(key(b)));
      expect(nonZero(sumMetricDays(parts, minus))).toEqual(nonZero(whole));
    }), { numRuns: 60 });
  });
});

describe('judging (pure)', () => {
  const variants = (n: number) => Array.from({ length: n }, (_, i) => ({
    id: `00000000-0000-4000-8000-00000000000${i}`, name: `v${i}`, description: null, is_control: i === 0, traffic_allocation: 100 / n, configuration: null,
  }));
  const arms = fc.array(fc.tuple(fc.nat({ max: 5000 }), fc.nat({ max: 5000 })), { minLength: 2, maxLength: 5 });

  it('gives p-values in [0, 1], adjusted at least raw, equal with one treatment, none for the control', () => {
    fc.assert(fc.property(arms, fc.constantFrom('none' as const, 'bonferroni' as const, 'benjamini_hochberg' as const), (cells, method) => {
      const vs = variants(cells.length);
      const totals = new Map(cells.map(([n, k], i) => [vs[i].id, {
        users: n + k, converters: k, eventCount: k, countSquares: k, valueSum: k, valueSquares: k,
      }]));
      const results = variantResults('conversion', vs, totals, method, 0.95);
      expect(results[0]).toMatchObject({ p_value: null, adjusted_p_value: null, is_significant: false });
      for (const r of results.slice(1)) {
        expect(r.p_value!).toBeGreaterThanOrEqual(0);
        expect(r.adjusted_p_value!).toBeLessThanOrEqual(1);
        expect(r.adjusted_p_value!).toBeGreaterThanOrEqual(r.p_value!);
        if (results.length === 2) expect(r.adjusted_p_value).toBe(r.p_value);
        expect(r.is_significant).toBe(r.adjusted_p_value! < 0.05);
      }
    }));
  });

  it('answers INCONCLUSIVE on a sample ratio mismatch whatever it would otherwise say, keeping the winner fields', () => {
    fc.assert(fc.property(arms, fc.boolean(), (cells, adequate) => {
      const vs = variants(cells.length);
      const totals = new Map(cells.map(([n, k], i) => [vs[i].id, { users: n + k, converters: k, eventCount: k, countSquares: k, valueSum: k, valueSquares: k }]));
      const results = variantResults('conversion', vs, totals, 'none', 0.95);
      const metric = { id: randomUUID(), name: 'm', description: null, event_name: 'm', metric_type: 'conversion', is_primary: true, expected_effect: null };
      const base = { metric, variants: results, alpha: 0.05, sampleSizeAdequate: adequate, required: null };
      const plain = judge({ ...base, srm: null });
      const srm = judge({ ...base, srm: { statistic: 30, p_value: 1e-7, df: 1, threshold: 0.001, warning: true, variants: [], sequential: null, diagnosis: null, auto_pause: false } });
      expect(srm).toEqual({ ...plain, recommendation: 'INCONCLUSIVE', recommendation_reason: expect.stringContaining('p = 1.00e-7') });
    }));
  });
});
