import { runtimeDays, sampleSizeForEffect, type PowerFailureReason } from '../../stats/index.js';
import { Unprocessable, type Loc } from '../../platform/errors.js';

export const CORRECTIONS = ['none', 'bonferroni', 'benjamini_hochberg'] as const;
export type Correction = (typeof CORRECTIONS)[number];

export interface PlanInput {
  baselineRate: number;
  /** Relative minimum detectable effect: 0.10 plans for 5% -> 5.5%. */
  mde: number;
  confidenceLevel: number;
  power: number;
  variants: number;
  correction: Correction;
  dailyTraffic?: number;
}

export interface SampleSizePlan {
  baseline_conversion_rate: number;
  mde: number;
  mde_absolute: number;
  target_conversion_rate: number;
  confidence_level: number;
  power: number;
  n_variants: number;
  comparisons: number;
  alpha_per_comparison: number;
  correction_method: Correction;
  required_sample_size_per_variant: number;
  total_sample_size: number;
  daily_traffic: number | null;
  estimated_days: number | null;
  explanation: string;
  generated_by: 'template';
}

export const RATE_REACHES_ONE = 'baseline_conversion_rate raised by mde reaches 100% or more';
export const EFFECT_TOO_SMALL = 'The required sample size is too large to compute; choose a larger mde';

function refusal(reason: PowerFailureReason, mdeLoc: Loc): Unprocessable {
  const msg = reason === 'rate_out_of_range' ? RATE_REACHES_ONE : EFFECT_TOO_SMALL;
  return new Unprocessable({ type: 'value_error', loc: mdeLoc, msg });
}

/**
 * Units per variant for a two-sided test of two proportions (src/stats power functions). With a correction each of
 * the variants - 1 comparisons with the control is planned at alpha / comparisons (spec, sample-size rule).
 */
export function planSampleSize(input: PlanInput, mdeLoc: Loc): SampleSizePlan {
  const comparisons = Math.max(1, input.variants - 1);
  // Rounded so that 0.95 gives alpha 0.05 rather than its binary neighbour 0.050000000000000044.
  const alpha = Math.round((1 - input.confidenceLevel) * 1e12) / 1e12;
  const alphaPerComparison = input.correction === 'none' ? alpha : alpha / comparisons;
  const size = sampleSizeForEffect(input.baselineRate, input.mde, 'relative', alphaPerComparison, input.power);
  if (size.value === null) throw refusal(size.reason, mdeLoc);
  const perVariant = size.value.n_per_variant;
  const days =
    input.dailyTraffic === undefined ? null : runtimeDays({ nPerVariant: perVariant, dailyTraffic: input.dailyTraffic, variantCount: input.variants }).value;
  const target = input.baselineRate * (1 + input.mde);
  const pct = (x: number) => `${+(x * 100).toPrecision(4)}%`;
  return {
    baseline_conversion_rate: input.baselineRate,
    mde: input.mde,
    mde_absolute: target - input.baselineRate,
    target_conversion_rate: target,
    confidence_level: input.confidenceLevel,
    power: input.power,
    n_variants: input.variants,
    comparisons,
    alpha_per_comparison: alphaPerComparison,
    correction_method: input.correction,
    required_sample_size_per_variant: perVariant,
    total_sample_size: perVariant * input.variants,
    daily_traffic: input.dailyTraffic ?? null,
    estimated_days: days,
    explanation:
      `To detect a change from ${pct(input.baselineRate)} to ${pct(target)} (a ${pct(input.mde)} relative lift) with ` +
      `${pct(input.power)} power at a two-sided significance level of ${+alphaPerComparison.toPrecision(4)} per comparison, ` +
      `each of the ${input.variants} variants needs ${perVariant.toLocaleString('en-US')} users` +
      (days === null ? '.' : `, about ${days} day${days === 1 ? '' : 's'} at ${input.dailyTraffic!.toLocaleString('en-US')} users a day.`),
    generated_by: 'template',
  };
}
