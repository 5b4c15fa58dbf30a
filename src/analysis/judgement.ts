/**
 * How results are judged (spec, "How results are judged"; docs/statistics.md, "Recommendation logic"): the
 * sample-ratio check and the recommendation from the primary metric.
 */
import { srmChiSquare, SRM_P_THRESHOLD } from '../stats/index.js';
import type { ExperimentSettings } from './types.js';
import { finite, type VariantResult } from './compare.js';
import type { Recommendation } from './domain.js';
import type { SrmBlock, Summary } from './model.js';
import type { Metric } from './snapshot.js';

export type { SrmBlock };


/**
 * Pearson chi-square of assigned users against the configured allocations. null when the check cannot run: bandit
 * experiments (allocation moves on purpose), fewer than two variants, or no assignments.
 */
export function srmBlock(
  e: ExperimentSettings, users: Map<string, number>, extra: Pick<SrmBlock, 'sequential' | 'diagnosis' | 'auto_pause'>,
): SrmBlock | null {
  if (e.experiment_type === 'bandit') return null;
  const observed = e.variants.map((v) => users.get(v.id) ?? 0);
  const allocations = e.variants.map((v) => v.traffic_allocation);
  const result = srmChiSquare(observed, allocations);
  if (!result) return null;
  return {
    statistic: finite(result.statistic),
    p_value: result.p_value,
    df: result.df,
    threshold: SRM_P_THRESHOLD,
    warning: result.srm,
    variants: e.variants.map((v, i) => ({
      variant_id: v.id, variant_name: v.name, allocation: v.traffic_allocation, observed: observed[i], expected: result.expected[i],
    })),
    ...extra,
  };
}

/** A p-value as people read it: four decimals, or scientific notation when smaller than 0.0001. */
export function formatP(p: number): string {
  if (p === 0) return '0';
  return p < 1e-4 ? p.toExponential(2) : p.toFixed(4);
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${+(x * 100).toFixed(2)}%`;

export type { Summary };

export interface JudgementInput {
  metric: Metric | undefined;
  /** the primary metric's variant results (control included) */
  variants: VariantResult[];
  alpha: number;
  sampleSizeAdequate: boolean;
  required: number | null;
  srm: SrmBlock | null;
}

/**
 * The recommendation, first match wins: SRM -> INCONCLUSIVE (winner fields still reported); nothing to judge ->
 * INCONCLUSIVE; no users -> CONTINUE_TESTING; a treatment significantly better -> SHIP_VARIANT (the best mean wins);
 * every treatment significantly worse -> KEEP_CONTROL; planned sample reached -> KEEP_CONTROL; else CONTINUE_TESTING.
 */
export function judge(input: JudgementInput): Summary {
  const { metric, variants, alpha } = input;
  const control = variants.find((v) => v.is_control);
  const treatments = variants.filter((v) => !v.is_control);
  const better = treatments.filter((v) => v.is_significant && v.mean !== null && control?.mean != null && v.mean > control.mean);
  const winner = better.sort((a, b) => (b.mean as number) - (a.mean as number))[0];
  const winnerFields = { has_winner: winner !== undefined, winning_variant_id: winner?.variant_id ?? null };
  const verdict = (recommendation: Recommendation, reason: string): Summary => ({ recommendation, recommendation_reason: reason, ...winnerFields });

  if (input.srm?.warning) {
    return verdict(
      'INCONCLUSIVE',
      `Sample ratio mismatch: assigned users do not match the configured traffic allocation (chi-square p = ${formatP(input.srm.p_value)}, ` +
        `below ${input.srm.threshold}). Find the cause before trusting these results.`,
    );
  }
  if (!metric) return verdict('INCONCLUSIVE', 'The experiment has no metric to judge.');
  if (!control) return verdict('INCONCLUSIVE', 'The experiment has no control variant to compare with.');
  if (treatments.length === 0) return verdict('INCONCLUSIVE', 'The experiment has no treatment variant to compare with the control.');
  if (variants.every((v) => v.sample_size === 0)) return verdict('CONTINUE_TESTING', 'No users have been assigned yet.');
  if (winner) {
    const lift = winner.relative_lift === null ? '' : ` (relative lift ${pct(winner.relative_lift)})`;
    return verdict(
      'SHIP_VARIANT',
      `${winner.variant_name} beats the control on ${metric.name}${lift}, adjusted p = ${formatP(winner.adjusted_p_value ?? 1)} below alpha ${alpha}.`,
    );
  }
  const worse = (v: VariantResult) => v.is_significant && v.mean !== null && control.mean !== null && v.mean < control.mean;
  if (treatments.every(worse)) {
    return verdict('KEEP_CONTROL', `Every treatment performs significantly worse than the control on ${metric.name}.`);
  }
  if (input.sampleSizeAdequate) {
    return verdict('KEEP_CONTROL', `The planned sample size was reached without a significant improvement on ${metric.name}.`);
  }
  const progress = input.required === null
    ? 'keep collecting data'
    : `the smallest variant has ${Math.min(...variants.map((v) => v.sample_size))} of the ${input.required} users planned per variant`;
  return verdict('CONTINUE_TESTING', `No significant improvement on ${metric.name} yet; ${progress}.`);
}
