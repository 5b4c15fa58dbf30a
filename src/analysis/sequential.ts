/**
 * Sequential analysis of the primary metric's conversion rate (or of the metric asked for; a definition's proportion,
 * mean or ratio): mSPRT always-valid p-values and confidence sequences (src/stats/sequential.ts), valid however often
 * the results are looked at.
 */
import { confidenceSequenceNormal, msprtNormal, type NormalDifference } from '../stats/index.js';
import { definitionArms, definitionRef, normalDifference, type NamedDefinition } from './definition-arms.js';
import type { ExperimentSettings } from './types.js';
import { finite } from './compare.js';
import { DEFAULT_MDE } from './sample-size.js';
import { controlOf, primaryMetric, totalsOf, type ArmTotals, type Variant } from './snapshot.js';
import type { SequentialBlock } from './model.js';


export type { SequentialBlock };
export type SequentialComparison = SequentialBlock['comparisons'][number];

/**
 * Control against each given treatment at `alpha`. The mixing variance is tau^2 = (mde x pooled rate)^2, the effect
 * size the experiment was planned for (expected_effect, else 5%). can_stop: the sequence excludes 0 (p <= alpha);
 * at_risk (advisory): the whole sequence lies below 0, so the treatment is doing harm. null when there is no metric,
 * control or treatment, and for a quantile definition. `metric` defaults to the primary metric; `named`: the metric's
 * definition and per-user values (proportion as conversion; mean and ratio by the normal mSPRT on their estimates).
 */
export function sequentialBlock(
  e: ExperimentSettings, totals: Map<string, ArmTotals>, alpha: number, treatments: readonly Variant[],
  metric = primaryMetric(e), named?: NamedDefinition,
): SequentialBlock | null {
  const control = controlOf(e);
  if (!metric || !control || treatments.length === 0) return null;
  const arms = named ? definitionArms(named, e.variants) : { kind: 'proportion' as const, totals };
  if (arms.kind === 'quantile') return null;
  const expected = metric.expected_effect;
  const mde = typeof expected === 'number' && expected > 0 && expected < 1 ? expected : DEFAULT_MDE;
  const normalOf = (v: Variant): NormalDifference | null => {
    if (arms.kind !== 'proportion') return normalDifference(arms.arms.get(control.id)!, arms.arms.get(v.id)!, mde);
    const c = totalsOf(arms.totals, control.id);
    const t = totalsOf(arms.totals, v.id);
    if (c.users === 0 || t.users === 0) return null;
    const pooled = (c.converters + t.converters) / (c.users + t.users);
    const pc = c.converters / c.users;
    const pt = t.converters / t.users;
    return { difference: pt - pc, variance: (pc * (1 - pc)) / c.users + (pt * (1 - pt)) / t.users, tauSquared: (mde * pooled) ** 2 };
  };
  const comparisons = treatments.map((v): SequentialComparison => {
    const empty = { variant_id: v.id, variant_name: v.name, difference: null, tau_squared: null, always_valid_p_value: 1, confidence_sequence: null, can_stop: false, at_risk: false };
    const input = normalOf(v);
    if (!input) return empty;
    const test = msprtNormal(input);
    const cs = confidenceSequenceNormal(input, alpha);
    const lower = finite(cs.lower);
    const upper = finite(cs.upper);
    const sequence = lower === null || upper === null ? null : { lower, upper };
    return {
      ...empty,
      difference: finite(test.difference),
      tau_squared: finite(input.tauSquared),
      always_valid_p_value: test.always_valid_p,
      confidence_sequence: sequence,
      can_stop: sequence !== null && test.always_valid_p <= alpha,
      at_risk: sequence !== null && sequence.upper < 0,
    };
  });
  const wins = comparisons.some((x) => x.can_stop && (x.difference ?? 0) > 0);
  const allHarm = comparisons.every((x) => x.at_risk);
  return {
    alpha,
    metric_id: metric.id,
    metric_name: metric.name,
    control_variant_id: control.id,
    comparisons,
    early_stop_recommendation: wins ? 'STOP_FOR_EFFICACY' : allHarm ? 'STOP_FOR_HARM' : 'CONTINUE',
    at_risk: comparisons.some((x) => x.at_risk),
    alpha_spending: [],
    ...(named ? { definition: definitionRef(named.definition) } : {}),
  };
}
