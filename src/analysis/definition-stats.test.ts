import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capGroups, quantileSummary, type Capping } from '../stats/index.js';
import { columnsOf, definitionStatsFromColumns, type DefinitionStats } from './definition-stats.js';
import { definitionStatsFromValues, ratioStatsOf } from './definitions.js';
import type { Variant } from './snapshot.js';
import type { DefinitionSettings, VariantUserValues } from './types.js';

const variants: Variant[] = [
  { id: 'c', name: 'control', is_control: true, traffic_allocation: 50 },
  { id: 't', name: 'treatment', is_control: false, traffic_allocation: 50 },
];
const definition = (kind: DefinitionSettings['kind'], capping: Capping): DefinitionSettings => ({
  id: 'd', version: 1, kind, value: kind === 'ratio' ? null : { event_name: 'revenue', aggregate: 'sum' },
  numerator: kind === 'ratio' ? { event_name: 'revenue', aggregate: 'sum' } : null,
  denominator: kind === 'ratio' ? { event_name: 'purchase', aggregate: 'count' } : null,
  quantile: kind === 'quantile' ? 0.9 : null, capping,
});

/** The statistics as computed before the columns: every analysed user's values padded with zeros, then capGroups. */
function padded(d: DefinitionSettings, values: VariantUserValues[], level: number): DefinitionStats {
  const data = new Map(values.map((v) => [v.variantId, v]));
  const column = (id: string, i: number, pad: boolean) => {
    const xs = (data.get(id)?.rows ?? []).map((r) => r[i]);
    if (pad) for (let k = xs.length; k < (data.get(id)?.users ?? 0); k += 1) xs.push(0);
    return xs;
  };
  const withEvents = (id: string) => (data.get(id)?.rows ?? []).filter((r) => r[0] > 0).length;
  const none = { users: 0, withEvents: 0, capped: 0, sum: 0, sumSquares: 0 };
  if (d.kind === 'quantile') {
    return { cap: null, arms: new Map(variants.map((v) => [v.id, {
      ...none, users: data.get(v.id)?.users ?? 0, withEvents: data.get(v.id)?.rows.length ?? 0, quantile: quantileSummary(column(v.id, 0, false), d.quantile!, level),
    }])) };
  }
  const pad = d.kind !== 'proportion';
  const xs = variants.map((v) => column(v.id, 0, pad));
  const capped = capGroups(xs, pad ? d.capping : { type: 'none' });
  return {
    cap: capped?.cap ?? null,
    arms: new Map(variants.map((v, i) => {
      const x = capped?.groups[i].values ?? xs[i];
      const count = capped?.groups[i].capped_count ?? 0;
      if (d.kind === 'ratio') return [v.id, { ...none, users: x.length, withEvents: withEvents(v.id), capped: count, ratio: ratioStatsOf(x, column(v.id, 1, true)) }];
      return [v.id, {
        users: data.get(v.id)?.users ?? 0, withEvents: withEvents(v.id), capped: count,
        sum: x.reduce((a, b) => a + b, 0), sumSquares: x.reduce((a, b) => a + b * b, 0),
      }];
    })),
  };
}

// Negative values too (a refund), and some exact zeros; no -0 (the same number, which toEqual tells apart).
const value = fc.oneof(fc.constant(0), fc.integer({ min: -50, max: 500 }), fc.double({ min: -100, max: 1000, noNaN: true }))
  .map((x) => (Object.is(x, -0) ? 0 : x));
const capping: fc.Arbitrary<Capping> = fc.oneof(
  fc.constant<Capping>({ type: 'none' }),
  fc.double({ min: -60, max: 600, noNaN: true }).map((v): Capping => ({ type: 'absolute', value: Object.is(v, -0) ? 0 : v })),
  fc.double({ min: 0.01, max: 0.99, noNaN: true }).map((p): Capping => ({ type: 'percentile', p })),
);
const arm = fc.tuple(fc.array(fc.tuple(value, fc.nat(6)), { maxLength: 25 }), fc.nat(30));

describe('definition statistics from columns (pure)', () => {
  it('property: the same numbers as padding every analysed user with zeros, capping, then summing', () => {
    fc.assert(fc.property(
      fc.constantFrom<DefinitionSettings['kind']>('proportion', 'mean', 'ratio', 'quantile'), capping, arm, arm, fc.boolean(),
      (kind, cap, control, treatment, asRows) => {
        const d = definition(kind, cap);
        const values: VariantUserValues[] = [control, treatment].map(([rows, zeros], i) => ({
          variantId: variants[i].id, users: rows.length + zeros, rows: rows.map(([x, y]) => (kind === 'ratio' ? [x, y] : [x])),
        }));
        const width = kind === 'ratio' ? 2 : 1;
        const expected = padded(d, values, 0.95);
        const columns = definitionStatsFromColumns(d, variants, values.map((v) => columnsOf(v, width)), 0.95);
        expect(columns).toEqual(expected);
        // Rows are accepted as they are (the other analyses' reads), alone or beside columns, with the same result.
        const mixed = asRows ? values : [columnsOf(values[0], width), values[1]];
        expect(definitionStatsFromValues(d, variants, mixed, 0.95)).toEqual(expected);
      },
    ), { numRuns: 600 });
  });

  it('a pooled percentile cap over mostly zeros, and a negative cap that caps the zeros of users without events', () => {
    const values = [{ variantId: 'c', users: 10, rows: [[5], [-2]] }, { variantId: 't', users: 4, rows: [[7], [1]] }];
    const p50 = definition('mean', { type: 'percentile', p: 0.5 });
    const stats = definitionStatsFromColumns(p50, variants, values.map((v) => columnsOf(v, 1)), 0.95);
    expect(stats.cap).toBe(0);
    expect(stats.arms.get('c')).toMatchObject({ users: 10, withEvents: 1, capped: 1, sum: -2, sumSquares: 4 });
    const negative = definitionStatsFromColumns(definition('mean', { type: 'absolute', value: -1 }), variants, values.map((v) => columnsOf(v, 1)), 0.95);
    // Every user but the one at -2 is capped to -1, the 8 without events included.
    expect(negative.arms.get('c')).toMatchObject({ capped: 9, sum: -11, sumSquares: 13 });
    expect(negative).toEqual(padded(definition('mean', { type: 'absolute', value: -1 }), values, 0.95));
  });
});
