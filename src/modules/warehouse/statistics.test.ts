import { describe, expect, it } from 'vitest';
import { metricResult, NOT_COMPUTED, sampleRatioCheck, type ExperimentSnapshot, type LabelAggregate } from './statistics.js';
import { createJobGate } from './runs.js';

const experiment: ExperimentSnapshot = {
  type: 'a_b',
  confidenceLevel: 0.95,
  variants: [
    { id: 'c', name: 'control', isControl: true, trafficAllocation: 50 },
    { id: 't', name: 'treatment', isControl: false, trafficAllocation: 50 },
  ],
};
const row = (label: string, units: number, conversions: number, valueSum = 0, valueSumSquares = 0): LabelAggregate => ({ label, units, conversions, valueSum, valueSumSquares });

describe('metric results from aggregates', () => {
  it('reports Not computed: fewer than 2 units for every variant of a mean metric when one variant has fewer than 2', () => {
    const result = metricResult('m', 'mean', [row('control', 5, 2, 10, 40), row('treatment', 1, 1, 3, 9)], experiment, {});
    expect(result.variants.map((v) => [v.units, v.note, v.mean])).toEqual([
      [5, NOT_COMPUTED.fewerThanTwo, undefined],
      [1, NOT_COMPUTED.fewerThanTwo, undefined],
    ]);
  });

  it('gives no p-value when neither arm varies, and never a 0 in its place', () => {
    const result = metricResult('m', 'mean', [row('control', 4, 4, 8, 16), row('treatment', 3, 3, 6, 12)], experiment, {});
    expect(result.variants[1]).toEqual({ label: 'treatment', variant_id: 't', units: 3, conversions: 3, mean: 2, ci_lower: 2, ci_upper: 2, note: NOT_COMPUTED.noVariation });
  });

  it('pools labels mapped to one variant and lists labels that match none', () => {
    const result = metricResult('m', 'proportion', [row('A', 10, 2), row('a', 10, 3), row('B', 20, 9), row('zzz', 4, 1)], experiment, { A: 'c', a: 'c', B: 't' });
    expect(result.variants.map((v) => [v.label, v.variant_id, v.units, v.conversions])).toEqual([
      ['A, a', 'c', 20, 5],
      ['B', 't', 20, 9],
      ['zzz', null, 4, 1],
    ]);
    expect(result.variants[2].note).toBe(NOT_COMPUTED.unmatched);
  });

  it('does not compare against a control without units', () => {
    const result = metricResult('m', 'proportion', [row('treatment', 20, 9)], experiment, {});
    expect(result.variants.map((v) => v.note)).toEqual([NOT_COMPUTED.noUnits, NOT_COMPUTED.noControl]);
  });

  it('skips the sample-ratio check for bandits and flags a clear mismatch otherwise', () => {
    expect(sampleRatioCheck({ control: 10, treatment: 900 }, { ...experiment, type: 'bandit' }, {})).toMatchObject({ checked: false });
    expect(sampleRatioCheck({ control: 100, treatment: 900 }, experiment, {})).toMatchObject({ checked: true, srm_detected: true, observed: { c: 100, t: 900 } });
  });
});

describe('per-process job gate', () => {
  it('hands out at most its size and takes each release once', () => {
    const gate = createJobGate(2);
    const first = gate.tryAcquire()!;
    const second = gate.tryAcquire()!;
    expect(gate.tryAcquire()).toBeUndefined();
    first();
    first();
    expect(gate.available()).toBe(1);
    second();
    expect(gate.available()).toBe(2);
  });
});
