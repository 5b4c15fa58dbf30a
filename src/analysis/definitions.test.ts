import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { combinedAggregates, definitionMetricResult, projectUserValues } from './definitions.js';
import type { DefinitionSettings, VariantUserValues } from './types.js';

const variants = [
  { id: '00000000-0000-4000-8000-000000000001', name: 'control', is_control: true, traffic_allocation: 50 },
  { id: '00000000-0000-4000-8000-000000000002', name: 'treatment', is_control: false, traffic_allocation: 50 },
];
const metric = { id: '00000000-0000-4000-8000-00000000000a', name: 'm', event_name: 'e', metric_type: 'revenue', is_primary: false, expected_effect: null };
const options = { correction_method: 'none' as const, confidence_level: 0.95 };
const mean = (capping: DefinitionSettings['capping']): DefinitionSettings => ({
  id: '00000000-0000-4000-8000-0000000000d1', version: 3, kind: 'mean', value: { event_name: 'revenue', aggregate: 'sum' },
  numerator: null, denominator: null, quantile: null, capping,
});

describe('definition metrics (pure)', () => {
  it('a combined read keeps, per definition, only the users with one of its own events', () => {
    const ratio: DefinitionSettings = {
      ...mean({ type: 'none' }), id: 'r', kind: 'ratio', value: null,
      numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'visit', aggregate: 'count' },
    };
    const quantile: DefinitionSettings = { ...mean({ type: 'none' }), id: 'q', kind: 'quantile', value: { event_name: 'load', aggregate: 'sum' }, quantile: 0.5 };
    const { aggregates, columns } = combinedAggregates([ratio, quantile]);
    expect(aggregates).toEqual([
      { event_name: 'revenue', aggregate: 'sum' }, { event_name: 'visit', aggregate: 'count' },
      { event_name: 'revenue', aggregate: 'count' }, { event_name: 'load', aggregate: 'sum' }, { event_name: 'load', aggregate: 'count' },
    ]);
    // User 1 has only a visit; user 2 only a load of 0 ms.
    const values: VariantUserValues[] = [{ variantId: 'v', users: 5, rows: [[0, 2, 0, 0, 0], [0, 0, 0, 0, 1]] }];
    expect(projectUserValues(values, columns.get('r')!)).toEqual([{ variantId: 'v', users: 5, rows: [[0, 2]] }]);
    expect(projectUserValues(values, columns.get('q')!)).toEqual([{ variantId: 'v', users: 5, rows: [[0]] }]);
  });

  it('no users and no control give nulls, never NaN, with the version recorded', () => {
    const empty = definitionMetricResult(metric, mean({ type: 'percentile', p: 0.9 }), [], variants, options);
    expect(empty.definition).toMatchObject({ version: 3, capping: { type: 'percentile', p: 0.9, cap: null, users_capped: 0 } });
    expect(JSON.stringify(empty)).not.toMatch(/NaN|Infinity/);
    const noControl = definitionMetricResult(metric, mean({ type: 'none' }), [], variants.map((v) => ({ ...v, is_control: false })), options);
    expect(noControl.definition!.variants.every((v) => v.difference === null && v.unavailable_reason === null)).toBe(true);
  });

  it('property: a cap at or above every per-user value changes no number', () => {
    fc.assert(fc.property(
      fc.array(fc.array(fc.double({ min: 0, max: 1000, noNaN: true }), { minLength: 0, maxLength: 20 }), { minLength: 2, maxLength: 2 }),
      fc.nat(5), fc.double({ min: 0, max: 10, noNaN: true }),
      (groups, zeros, extra) => {
        const values: VariantUserValues[] = groups.map((rows, i) => ({ variantId: variants[i].id, users: rows.length + zeros, rows: rows.map((x) => [x]) }));
        const top = Math.max(0, ...groups.flat());
        const plain = definitionMetricResult(metric, mean({ type: 'none' }), values, variants, options);
        const capped = definitionMetricResult(metric, mean({ type: 'absolute', value: top + extra }), values, variants, options);
        expect(capped.variants).toEqual(plain.variants);
        expect(capped.definition!.variants).toEqual(plain.definition!.variants);
        expect(capped.definition!.capping!.users_capped).toBe(0);
      },
    ), { numRuns: 200 });
  });
});
