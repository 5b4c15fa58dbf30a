import { finiteOrNull, fisherExactTwoSided, srmChiSquare, studentTQuantile, summaryFromSums, welchTTest } from '../../stats/index.js';
import type { MetricResult, VariantResult } from './schemas.js';

/**
 * Turns the aggregates a warehouse sent back into results (spec "Analysis rules" 1-3). Pure: numbers in, numbers
 * out; the statistics come from src/stats.
 */

export interface ExperimentSnapshot {
  type: string;
  confidenceLevel: number;
  /** The experiment's correction over its treatments (definition results); absent in runs asked for before it was kept. */
  correctionMethod?: string;
  variants: Array<{ id: string; name: string; isControl: boolean; trafficAllocation: number }>;
}

export interface LabelAggregate {
  label: string;
  units: number;
  conversions: number;
  valueSum: number;
  valueSumSquares: number;
}

export const NOT_COMPUTED = {
  fewerThanTwo: 'Not computed: fewer than 2 units',
  noVariation: 'Not computed: no variation',
  noUnits: 'Not computed: no units',
  noControl: 'Not computed: no control units',
  unmatched: 'Not computed: this label matches no variant of the experiment',
} as const;

/** variant_map first, then a variant whose name equals the label (spec "Analysis request"). */
export function variantForLabel(label: string, experiment: ExperimentSnapshot, variantMap: Record<string, string>): string | null {
  return variantMap[label] ?? experiment.variants.find((v) => v.name === label)?.id ?? null;
}

interface Arm {
  units: number;
  conversions: number;
  sum: number;
  sumSquares: number;
  labels: string[];
}

/** Sufficient statistics are additive, so labels mapped to one variant are pooled. */
function armsByVariant(rows: LabelAggregate[], experiment: ExperimentSnapshot, variantMap: Record<string, string>) {
  const arms = new Map<string, Arm>(experiment.variants.map((v) => [v.id, { units: 0, conversions: 0, sum: 0, sumSquares: 0, labels: [] }]));
  const unmatched: LabelAggregate[] = [];
  for (const row of rows) {
    const id = variantForLabel(row.label, experiment, variantMap);
    const arm = id ? arms.get(id) : undefined;
    if (!arm) {
      unmatched.push(row);
      continue;
    }
    arm.units += row.units;
    arm.conversions += row.conversions;
    arm.sum += row.valueSum;
    arm.sumSquares += row.valueSumSquares;
    arm.labels.push(row.label);
  }
  return { arms, unmatched };
}

export function metricResult(
  metricSourceId: string,
  metricType: 'proportion' | 'mean',
  rows: LabelAggregate[],
  experiment: ExperimentSnapshot,
  variantMap: Record<string, string>,
): MetricResult {
  const { arms, unmatched } = armsByVariant(rows, experiment, variantMap);
  const control = experiment.variants.find((v) => v.isControl);
  const controlArm = control ? arms.get(control.id) : undefined;
  const level = experiment.confidenceLevel;
  const tooFew = metricType === 'mean' && experiment.variants.some((v) => (arms.get(v.id)?.units ?? 0) < 2);

  const variants: VariantResult[] = experiment.variants.map((v) => {
    const arm = arms.get(v.id)!;
    const base: VariantResult = { label: arm.labels.join(', ') || null, variant_id: v.id, units: arm.units, conversions: arm.conversions };
    if (metricType === 'proportion') {
      if (arm.units === 0) return { ...base, note: NOT_COMPUTED.noUnits };
      const withMean = { ...base, mean: arm.conversions / arm.units };
      if (v.isControl) return withMean;
      if (!controlArm || controlArm.units === 0) return { ...withMean, note: NOT_COMPUTED.noControl };
      const p = fisherExactTwoSided(controlArm.conversions, controlArm.units, arm.conversions, arm.units);
      return p === null ? withMean : { ...withMean, p_value: p };
    }
    if (tooFew) return { ...base, note: NOT_COMPUTED.fewerThanTwo };
    const summary = summaryFromSums(arm.units, arm.sum, arm.sumSquares);
    const half = studentTQuantile(1 - (1 - level) / 2, summary.n - 1) * Math.sqrt(summary.variance / summary.n);
    const withMean: VariantResult = {
      ...base,
      mean: summary.mean,
      ci_lower: finiteOrNull(summary.mean - half) ?? undefined,
      ci_upper: finiteOrNull(summary.mean + half) ?? undefined,
    };
    if (v.isControl || !controlArm) return v.isControl ? withMean : { ...withMean, note: NOT_COMPUTED.noControl };
    const controlSummary = summaryFromSums(controlArm.units, controlArm.sum, controlArm.sumSquares);
    if (controlSummary.variance === 0 && summary.variance === 0) return { ...withMean, note: NOT_COMPUTED.noVariation };
    return { ...withMean, p_value: welchTTest(controlSummary, summary, level).p_value };
  });
  for (const row of unmatched) {
    variants.push({ label: row.label, variant_id: null, units: row.units, conversions: row.conversions, note: NOT_COMPUTED.unmatched });
  }
  return { metric_source_id: metricSourceId, metric_type: metricType, variants };
}

/** Spec rule 3: sample-ratio check of exposed units against the traffic allocations; skipped for bandits. */
export function sampleRatioCheck(unitsPerLabel: Record<string, number>, experiment: ExperimentSnapshot, variantMap: Record<string, string>) {
  if (experiment.type === 'bandit') return { checked: false, reason: 'Bandit experiments move their allocation, so no ratio is expected' };
  const observed = new Map(experiment.variants.map((v) => [v.id, 0]));
  for (const [label, units] of Object.entries(unitsPerLabel)) {
    const id = variantForLabel(label, experiment, variantMap);
    if (id && observed.has(id)) observed.set(id, observed.get(id)! + units);
  }
  const counts = experiment.variants.map((v) => observed.get(v.id)!);
  const result = srmChiSquare(counts, experiment.variants.map((v) => v.trafficAllocation));
  if (!result) return { checked: false, reason: 'Not enough exposed units to test the allocation' };
  return {
    checked: true,
    p_value: result.p_value,
    chi_square: result.statistic,
    srm_detected: result.srm,
    observed: Object.fromEntries(experiment.variants.map((v, i) => [v.id, counts[i]])),
    expected: Object.fromEntries(experiment.variants.map((v, i) => [v.id, result.expected[i]])),
  };
}

/** The experiment facts an analysis needs, read through the experiments read model. */
export interface ExperimentFacts extends ExperimentSnapshot {
  startDate: string | null;
  endDate: string | null;
}
