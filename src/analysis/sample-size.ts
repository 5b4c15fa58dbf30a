/**
 * The sample-size plan of an experiment (spec, "Sample-size query parameters"): a two-sided test of two proportions on
 * the primary metric's conversion rate, each of the variants - 1 comparisons planned at alpha / comparisons under a
 * correction.
 */
import { achievedPower, achievedPowerTwoMeans, sampleSizeTwoMeans, sampleSizeTwoProportions } from '../stats/index.js';
import { definitionArms, definitionRef, type NamedDefinition, type ValueArm } from './definition-arms.js';
import type { ExperimentSettings } from './types.js';
import { alphaFor, finite } from './compare.js';
import { controlOf, primaryMetric, totalsOf, type ArmTotals } from './snapshot.js';
import type { CorrectionMethod, UnavailableReason } from './domain.js';
import type { SampleSizeResult } from './model.js';

export const DEFAULT_MDE = 0.05;
export const DEFAULT_POWER = 0.8;
export const RATE_REACHES_ONE = 'baseline_conversion_rate raised by mde reaches 100% or more';
export const EFFECT_TOO_SMALL = 'mde changes baseline_conversion_rate too little for a finite sample size';
export const BASELINE_RATE_OF_PROPORTIONS = 'baseline_conversion_rate applies to conversion and proportion metrics only; mean, ratio and quantile metrics are planned from their observed values';


/** The plan's settings (GET /results/{id}/sample-size's query; each absent one has its default). */
export interface SampleSizeQuery {
  baseline_conversion_rate?: number;
  mde?: number;
  confidence_level?: number;
  power_target?: number;
  correction_method?: CorrectionMethod;
}

/** A requested baseline the plan cannot use (the caller's mistake; results answer it with 422 on the field). */
export class PlanRefused extends Error {
  readonly field = 'baseline_conversion_rate';
}

export type { SampleSizeResult };

/** Why the plan is only a guide for this experiment's design (none of these break the fixed-horizon formula's use). */
function guideOnlyReasons(e: ExperimentSettings): SampleSizeResult['guide_only_reasons'] {
  const reasons: SampleSizeResult['guide_only_reasons'] = [];
  if (e.experiment_type === 'bandit') reasons.push('adaptive_allocation');
  if (new Set(e.variants.map((v) => v.traffic_allocation)).size > 1) reasons.push('unequal_allocation');
  if (e.sequential_testing_enabled) reasons.push('sequential_testing');
  if (e.bayesian_enabled) reasons.push('bayesian');
  return reasons;
}

/**
 * The plan for an experiment from its current totals. Nothing to plan from gives unavailable_reason; a requested
 * baseline that cannot be planned is the caller's mistake (422). The smallest variant is the current size. `metric`
 * defaults to the primary metric; `named`: its definition and per-user values (a proportion is planned as conversion;
 * a mean or ratio by the two-means formula, meanPlan; a quantile has no plan).
 */
export function sampleSizePlan(
  e: ExperimentSettings, totals: Map<string, ArmTotals>, query: SampleSizeQuery, metric = primaryMetric(e), named?: NamedDefinition,
): SampleSizeResult {
  const control = controlOf(e);
  const confidenceLevel = query.confidence_level ?? e.confidence_level;
  const correction = query.correction_method ?? e.correction_method;
  const comparisons = Math.max(1, e.variants.length - 1);
  const alpha = correction === 'none' ? alphaFor(confidenceLevel) : alphaFor(confidenceLevel) / comparisons;
  const expected = metric?.expected_effect;
  const mdeSource = query.mde !== undefined ? 'request' : typeof expected === 'number' && expected > 0 && expected < 1 ? 'experiment' : 'default';
  const mde = query.mde ?? (mdeSource === 'experiment' ? (expected as number) : DEFAULT_MDE);
  const power = query.power_target ?? DEFAULT_POWER;
  const arms = named ? definitionArms(named, e.variants) : { kind: 'proportion' as const, totals };
  const sizes = (id: string) => (arms.kind === 'proportion' ? totalsOf(arms.totals, id).users : arms.kind === 'quantile' ? 0 : arms.arms.get(id)!.n);
  const current = e.variants.length && arms.kind !== 'quantile' ? Math.min(...e.variants.map((v) => sizes(v.id))) : 0;
  const controlTotals = control && arms.kind === 'proportion' ? totalsOf(arms.totals, control.id) : undefined;
  const fromRequest = query.baseline_conversion_rate !== undefined;

  const result: SampleSizeResult = {
    required_sample_size_per_variant: null,
    current_sample_size_per_variant: current,
    is_adequate: false,
    achieved_power: null,
    baseline_rate: null,
    baseline_source: fromRequest ? 'request' : 'observed',
    baseline_users: fromRequest ? null : (control ? sizes(control.id) : 0),
    mde,
    mde_source: mdeSource,
    mde_absolute: null,
    confidence_level: confidenceLevel,
    alpha,
    comparisons,
    correction_method: correction,
    power_target: power,
    metric_id: metric?.id ?? null,
    metric_name: metric?.name ?? null,
    metric_type: metric?.metric_type ?? null,
    analysed_as: 'conversion',
    guide_only_reasons: guideOnlyReasons(e),
    unavailable_reason: null,
    days_to_significance: null,
    projected_completion_date: null,
    ...(named ? { definition: definitionRef(named.definition) } : {}),
  };
  const unavailable = (reason: UnavailableReason): SampleSizeResult => ({ ...result, unavailable_reason: reason });

  if (named && arms.kind !== 'proportion') {
    if (fromRequest) throw new PlanRefused(BASELINE_RATE_OF_PROPORTIONS);
    if (arms.kind === 'quantile') return unavailable('not_defined_for_quantiles');
    return meanPlan({ ...result, analysed_as: arms.kind }, control ? arms.arms.get(control.id) : undefined, alpha, power, current);
  }
  if (!metric) return unavailable('no_metric');
  let baseline: number;
  if (query.baseline_conversion_rate !== undefined) baseline = query.baseline_conversion_rate;
  else if (!controlTotals || controlTotals.users === 0) return unavailable('no_control_data');
  else if (controlTotals.converters === 0) return unavailable('no_control_conversions');
  else if (controlTotals.converters >= controlTotals.users) return unavailable('rate_at_boundary');
  else baseline = controlTotals.converters / controlTotals.users;

  const target = baseline * (1 + mde);
  const refuse = (msg: string) => new PlanRefused(msg);
  if (!(target < 1)) {
    if (fromRequest) throw refuse(RATE_REACHES_ONE);
    return unavailable('effect_out_of_range');
  }
  const size = sampleSizeTwoProportions(baseline, target, alpha, power);
  if (size.value === null) {
    if (fromRequest) throw refuse(EFFECT_TOO_SMALL);
    return unavailable('effect_too_small');
  }
  return {
    ...sized(result, size.value.n_per_variant, current, achievedPower(baseline, target, current, alpha).value),
    baseline_rate: baseline,
    mde_absolute: finite(target - baseline),
  };
}

/** A plan with its size: adequate when the smallest variant reached it. */
const sized = (result: SampleSizeResult, required: number, current: number, power: number | null): SampleSizeResult => ({
  ...result, required_sample_size_per_variant: required, is_adequate: current >= required, achieved_power: finite(power),
});

/**
 * A mean or ratio definition: n = 2σ²(z_{1−α/2} + z_power)²/δ² with δ = mde × the control's value and σ² the control's
 * per-user variance (a mean: s² of the capped values; a ratio: n·Var(R) by the delta method); src/stats/power-means.ts.
 */
function meanPlan(result: SampleSizeResult, control: ValueArm | undefined, alpha: number, power: number, current: number): SampleSizeResult {
  if (!control || control.value === null) return { ...result, unavailable_reason: 'no_control_data' };
  if (control.variance === null || !(control.variance > 0)) return { ...result, unavailable_reason: 'no_control_variance' };
  const sigma2 = control.variance * control.n;
  const effect = result.mde * control.value;
  const planned = { ...result, baseline_value: control.value, baseline_std_dev: finite(Math.sqrt(sigma2)), mde_absolute: finite(effect) };
  const size = sampleSizeTwoMeans(sigma2, effect, alpha, power);
  if (size.value === null) return { ...planned, unavailable_reason: 'effect_too_small' };
  return sized(planned, size.value.n_per_variant, current, achievedPowerTwoMeans(sigma2, effect, current, alpha).value);
}
