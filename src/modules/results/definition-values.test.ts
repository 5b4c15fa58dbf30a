import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DefinitionSettings } from '../../analysis/types.js';
import { pairIds, valuesFromTotals } from './definition-values.js';
import type { RangeTotals } from './read.js';

/** The pairs pairIds visits, as sorted [a index, b index] (-1: absent from that list). */
function visited(a: string[], b: string[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  pairIds(a, b, (i, j) => out.push([i, j]));
  return out.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
}

/** The same by a Map of ids: what pairIds must give. */
function byMap(a: string[], b: string[]): Array<[number, number]> {
  const inB = new Map(b.map((id, j) => [id, j]));
  const inA = new Set(a);
  const out: Array<[number, number]> = a.map((id, i) => [i, inB.get(id) ?? -1]);
  b.forEach((id, j) => { if (!inA.has(id)) out.push([-1, j]); });
  return out.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
}

// Two pairs of ids of one FNV-1a hash each (found by search): a collision must pair nobody wrongly.
const COLLIDING = [['user-129599', 'user-732382'], ['user-129598', 'user-732383']];

describe('pairing two passes\' users by id (pure)', () => {
  it('property: every id of either list is visited once, with its index in each list', () => {
    const ids = fc.uniqueArray(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(...COLLIDING.flat())), { maxLength: 40 });
    fc.assert(fc.property(ids, fc.func(fc.boolean()), fc.func(fc.boolean()), (all, inA, inB) => {
      const a = all.filter((id) => inA(id));
      const b = all.filter((id) => inB(id)).reverse();
      expect(visited(a, b)).toEqual(byMap(a, b));
    }), { numRuns: 300 });
  });

  it('ids of one hash: pairs the equal ones only, whatever the order', () => {
    const a = [COLLIDING[0][0], 'x', COLLIDING[1][1], COLLIDING[0][1]];
    const b = [COLLIDING[0][1], COLLIDING[1][0], 'x'];
    expect(visited(a, b)).toEqual(byMap(a, b));
    expect(visited(a, b)).toEqual([[-1, 1], [0, -1], [1, 2], [2, -1], [3, 0]]);
  });
});

describe('a ratio\'s per-user values from two passes\' totals', () => {
  const ratio: DefinitionSettings = {
    id: 'r', version: 1, kind: 'ratio', value: null, quantile: null, capping: { type: 'none' },
    numerator: { event_name: 'revenue', aggregate: 'sum' }, denominator: { event_name: 'purchase', aggregate: 'count' },
  };
  const part = (range: number, variantId: string, users: Array<[string, number, number]>): RangeTotals => ({
    range, variantId, userIds: users.map((u) => u[0]), counts: users.map((u) => u[1]), sums: users.map((u) => u[2]),
  });

  it('pairs each user\'s two totals across day groups of a range, with 0 for the event a user lacks', () => {
    const totals = new Map([
      ['revenue', [part(0, 'c', [['u1', 1, 10]]), part(0, 'c', [['u2', 2, 5]]), part(1, 't', [['u3', 1, 7]])]],
      ['purchase', [part(0, 'c', [['u2', 3, 0], ['u4', 1, 0]]), part(1, 't', [['u3', 2, 0]])]],
    ]);
    const values = valuesFromTotals([{ id: 'c' }, { id: 't' }], ratio, totals, new Map([['c', 9], ['t', 4]]));
    const rows = values.map((v) => ({ users: v.users, rows: [...v.columns[0]].map((x, k) => [x, v.columns[1][k]]).sort((p, q) => p[0] - q[0] || p[1] - q[1]) }));
    expect(rows).toEqual([{ users: 9, rows: [[0, 1], [5, 3], [10, 0]] }, { users: 4, rows: [[7, 2]] }]);
  });
});
