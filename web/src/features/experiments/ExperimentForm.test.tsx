import { describe, expect, it } from 'vitest';
import { allocationTotal, evenSplit } from './ExperimentForm';
import { allowedTransitions, transitionLabel } from './lifecycle';

describe('allocation inputs', () => {
  it('splits evenly into shares that add up to exactly 100', () => {
    for (let n = 1; n <= 12; n += 1) {
      expect(allocationTotal(evenSplit(n).map((traffic_allocation) => ({ traffic_allocation })))).toBe(100);
    }
    expect(evenSplit(3)).toEqual(['33.34', '33.33', '33.33']);
  });

  it('sums to two decimals and counts blank inputs as zero', () => {
    expect(allocationTotal([{ traffic_allocation: '33.33' }, { traffic_allocation: '33.33' }, { traffic_allocation: '33.34' }])).toBe(100);
    expect(allocationTotal([{ traffic_allocation: '' }, { traffic_allocation: '60' }])).toBe(60);
  });
});

describe('lifecycle buttons', () => {
  it('offers only the transitions the server allows from each status', () => {
    expect(allowedTransitions('draft')).toEqual(['start', 'archive']);
    expect(allowedTransitions('active')).toEqual(['pause', 'complete']);
    expect(allowedTransitions('paused')).toEqual(['start', 'complete', 'archive']);
    expect(allowedTransitions('completed')).toEqual(['archive']);
    expect(allowedTransitions('archived')).toEqual([]);
    expect(transitionLabel('start', 'paused')).toBe('Resume');
  });
});
