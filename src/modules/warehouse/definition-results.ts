/**
 * Metric library definitions analysed on warehouse aggregates (issue 32): the rows of `definitionStatement` become
 * the sufficient statistics src/analysis/definitions.ts compares, so every number is computed by the same code as the
 * in-database results' definition blocks. Pure.
 */
import { definitionResultFromStats, type DefinitionArm, type DefinitionStats } from '../../analysis/definitions.js';
import type { CorrectionMethod } from '../../analysis/domain.js';
import type { DefinitionSettings } from '../../analysis/types.js';
import type { ArmLabel } from './plan-definitions.js';
import type { DefinitionMetricResult } from './schemas.js';
import { variantForLabel, type ExperimentSnapshot } from './statistics.js';
import { num } from './views.js';

/** The variants' arms: each label's variant index (variant_map first, then by name); labels of no variant apart. */
export function armLabels(labels: string[], experiment: ExperimentSnapshot, variantMap: Record<string, string>) {
  const arms: ArmLabel[] = [];
  const unmatched: string[] = [];
  for (const label of labels) {
    const id = variantForLabel(label, experiment, variantMap);
    const arm = experiment.variants.findIndex((v) => v.id === id);
    if (arm >= 0) arms.push({ label, arm });
    else unmatched.push(label);
  }
  return { arms, unmatched };
}

const nullable = (value: unknown): number | null => (value === null || value === undefined ? null : num(value));

/** Per variant id, the statistics of the statement's row for its arm (none: no users, or none with events). */
export function statsFromRows(
  def: DefinitionSettings, experiment: ExperimentSnapshot, rows: Array<Record<string, unknown>>, unitsPerArm: number[],
): DefinitionStats {
  const byArm = new Map(rows.map((r) => [num(r.arm), r]));
  const arms = new Map<string, DefinitionArm>();
  // An absolute cap is the definition's value even without rows, as in the in-database results.
  let cap: number | null = def.kind !== 'proportion' && def.capping.type === 'absolute' ? def.capping.value : null;
  experiment.variants.forEach((v, i) => {
    const r = byArm.get(i);
    if (def.kind === 'quantile') {
      const n = r ? num(r.users) : 0;
      const lower = r ? nullable(r.lower_value) : null;
      const upper = r ? nullable(r.upper_value) : null;
      const bounded = lower !== null && upper !== null;
      arms.set(v.id, {
        users: unitsPerArm[i] ?? 0, withEvents: n, capped: 0, sum: 0, sumSquares: 0,
        quantile: r && n > 0 ? { n, quantile: num(r.quantile), lower: bounded ? lower : null, upper: bounded ? upper : null } : null,
      });
      return;
    }
    if (def.capping.type === 'percentile' && r && r.cap !== null && r.cap !== undefined) cap = num(r.cap);
    const users = r ? num(r.users) : 0;
    const arm: DefinitionArm = {
      users, withEvents: r ? num(r.with_events) : 0, capped: r ? num(r.capped) : 0, sum: r ? num(r.sum_x) : 0, sumSquares: r ? num(r.sum_x2) : 0,
    };
    if (def.kind === 'ratio') {
      arm.ratio = { n: users, sum_x: arm.sum, sum_y: r ? num(r.sum_y) : 0, sum_x2: arm.sumSquares, sum_y2: r ? num(r.sum_y2) : 0, sum_xy: r ? num(r.sum_xy) : 0 };
    }
    arms.set(v.id, arm);
  });
  return { cap, arms };
}

/** The definition's result: per variant its labels and the results' variant fields, and the results' definition block. */
export function definitionMetricResult(
  def: DefinitionSettings, sourceId: string, experiment: ExperimentSnapshot, stats: DefinitionStats,
  labels: { arms: ArmLabel[]; unmatched: string[] },
): DefinitionMetricResult {
  const variants = experiment.variants.map((v) => ({ id: v.id, name: v.name, is_control: v.isControl, traffic_allocation: v.trafficAllocation }));
  const metric = { id: def.id, name: def.id, event_name: '', metric_type: def.kind, is_primary: false, expected_effect: null };
  const options = { correction_method: (experiment.correctionMethod ?? 'benjamini_hochberg') as CorrectionMethod, confidence_level: experiment.confidenceLevel };
  const r = definitionResultFromStats(metric, def, variants, stats, options);
  return {
    metric_definition_id: def.id,
    metric_source_id: sourceId,
    test: r.test,
    variants: r.variants.map((v, i) => ({
      ...v,
      label: labels.arms.filter((a) => a.arm === i).map((a) => a.label).join(', ') || null,
    })),
    unmatched_labels: labels.unmatched,
    definition: r.definition!,
  };
}
