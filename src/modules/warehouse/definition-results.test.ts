import { describe, expect, it } from 'vitest';
import { definitionStatsFromValues, type DefinitionStats } from '../../analysis/definitions.js';
import type { DefinitionSettings } from '../../analysis/types.js';
import { armLabels, definitionMetricResult, statsFromRows } from './definition-results.js';
import type { ExperimentSnapshot } from './statistics.js';

const experiment: ExperimentSnapshot = {
  type: 'ab_test', confidenceLevel: 0.95, correctionMethod: 'none',
  variants: [
    { id: '00000000-0000-4000-8000-000000000001', name: 'control', isControl: true, trafficAllocation: 50 },
    { id: '00000000-0000-4000-8000-000000000002', name: 'treatment', isControl: false, trafficAllocation: 50 },
  ],
};
const mean: DefinitionSettings = {
  id: '00000000-0000-4000-8000-0000000000d1', version: 2, kind: 'mean', value: { event_name: 'revenue', aggregate: 'sum' },
  numerator: null, denominator: null, quantile: null, capping: { type: 'absolute', value: 45 },
};
const p90: DefinitionSettings = { ...mean, kind: 'quantile', value: { event_name: 'load', aggregate: 'sum' }, quantile: 0.9, capping: { type: 'none' } };
const analysisVariants = experiment.variants.map((v) => ({ id: v.id, name: v.name, is_control: v.isControl, traffic_allocation: v.trafficAllocation }));

describe('definition results from warehouse rows (pure)', () => {
  it('maps labels to variants by variant_map, then by name, and keeps the others apart', () => {
    expect(armLabels(['A', 'control', 'other'], experiment, { A: experiment.variants[1].id })).toEqual({
      arms: [{ label: 'A', arm: 1 }, { label: 'control', arm: 0 }], unmatched: ['other'],
    });
  });

  it('no rows: the same stats as no per-user values (an absolute cap is still the definition\'s value)', () => {
    for (const def of [mean, p90]) {
      const fromRows = statsFromRows(def, experiment, [], [0, 0]);
      const fromValues: DefinitionStats = definitionStatsFromValues(def, analysisVariants, [], 0.95);
      expect(fromRows).toEqual(fromValues);
    }
  });

  it('a quantile arm with one order statistic out of range has neither (as quantileSummary)', () => {
    const stats = statsFromRows(p90, experiment, [{ arm: 0, users: 3, quantile: 7.5, lower_value: 5, upper_value: null }], [10, 4]);
    expect(stats.arms.get(experiment.variants[0].id)).toMatchObject({ users: 10, withEvents: 3, quantile: { n: 3, quantile: 7.5, lower: null, upper: null } });
    const result = definitionMetricResult(p90, '00000000-0000-4000-8000-0000000000e1', experiment, stats, { arms: [{ label: 'control', arm: 0 }], unmatched: [] });
    expect(result.variants.map((v) => v.label)).toEqual(['control', null]);
    expect(result.definition).toMatchObject({ version: 2, kind: 'quantile', capping: null });
    expect(result.definition.variants[1].unavailable_reason).toBe('insufficient_data');
  });
});
