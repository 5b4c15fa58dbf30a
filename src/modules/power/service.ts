/**
 * The power calculator (spec, "Power calculator routes"): sample size, minimum detectable effect and runtime for a
 * two-sided test of two proportions (src/stats/power.ts), and a plan with built-in advice.
 */
import type { CorrectionMethod } from '../experiments/domain.js';
import { Unprocessable, type Loc } from '../../platform/errors.js';
import {
  minimumDetectableEffect, runtimeDays, sampleSizeTwoProportions, treatmentRateFor, type PowerFailureReason,
} from '../../stats/index.js';
import { alphaFor } from '../../analysis/compare.js';
import type { MdeBody, MdeView, PlanBody, PlanView, RuntimeBody, RuntimeView, SampleSizeBody, SampleSizeView } from './schemas.js';

export const OUT_OF_RANGE = 'The calculation leaves the range of floating-point numbers; use less extreme values';
export const RATE_OUT_OF_RANGE = 'baseline_conversion_rate changed by mde must stay between 0 and 1';
export const EFFECT_TOO_SMALL = 'mde is too small to change baseline_conversion_rate';
export const NOT_REACHABLE = 'No effect within the possible conversion rates reaches the requested power with this sample size';

function refusal(reason: PowerFailureReason): Unprocessable {
  const issue = (loc: Loc, msg: string) => new Unprocessable({ type: 'value_error', loc, msg });
  if (reason === 'rate_out_of_range') return issue(['body', 'mde'], RATE_OUT_OF_RANGE);
  if (reason === 'zero_effect') return issue(['body', 'mde'], EFFECT_TOO_SMALL);
  if (reason === 'not_reachable') return issue(['body', 'sample_size_per_variant'], NOT_REACHABLE);
  return issue(['body'], OUT_OF_RANGE);
}

/** A result that must stay an exact integer in JSON, or the fixed out-of-range refusal. */
function safeInteger(n: number): number {
  if (!Number.isSafeInteger(n)) throw refusal('out_of_range');
  return n;
}

interface Design {
  confidence_level: number;
  power: number;
  n_variants: number;
  correction_method: CorrectionMethod;
}

/** Each of the variants - 1 comparisons with the control at alpha, or alpha / comparisons under a correction. */
function alphaOf(d: Design): number {
  const alpha = alphaFor(d.confidence_level);
  return d.correction_method === 'none' ? alpha : alpha / (d.n_variants - 1);
}

/** The design fields every calculation answers with; effects as magnitudes. */
function designView(d: Design & { baseline_conversion_rate: number }, treatmentRate: number) {
  const baseline = d.baseline_conversion_rate;
  return {
    baseline_conversion_rate: baseline,
    treatment_rate: treatmentRate,
    mde_absolute: Math.abs(treatmentRate - baseline),
    mde_relative: Math.abs(treatmentRate - baseline) / baseline,
    confidence_level: d.confidence_level,
    power: d.power,
    n_variants: d.n_variants,
    comparisons: d.n_variants - 1,
    correction_method: d.correction_method,
    alpha_per_comparison: alphaOf(d),
  };
}

function sampleSize(body: SampleSizeBody): SampleSizeView {
  const treatment = treatmentRateFor(body.baseline_conversion_rate, body.mde, body.mde_type);
  const size = sampleSizeTwoProportions(body.baseline_conversion_rate, treatment, alphaOf(body), body.power);
  if (size.value === null) throw refusal(size.reason);
  const perVariant = safeInteger(size.value.n_per_variant);
  return {
    ...designView(body, treatment),
    required_sample_size_per_variant: perVariant,
    total_sample_size: safeInteger(perVariant * body.n_variants),
  };
}

function runtime(body: RuntimeBody): RuntimeView {
  const days = runtimeDays({
    nPerVariant: body.required_sample_size, dailyTraffic: body.daily_traffic, variantCount: body.n_variants, trafficShare: body.traffic_share,
  });
  if (days.value === null) throw refusal(days.reason);
  const perDay = (body.daily_traffic * body.traffic_share) / body.n_variants;
  return {
    required_sample_size: body.required_sample_size,
    daily_traffic: body.daily_traffic,
    traffic_share: body.traffic_share,
    n_variants: body.n_variants,
    users_per_variant_per_day: perDay,
    total_sample_size: safeInteger(body.required_sample_size * body.n_variants),
    days: safeInteger(days.value),
  };
}

const pct = (x: number) => `${+(x * 100).toPrecision(4)}%`;

/** Built-in advice for a plan (spec: /power/plan advice is always built in). */
function advice(plan: SampleSizeView, days: number | null, dailyTraffic: number | null): string[] {
  const lines = [
    `Plan for ${plan.required_sample_size_per_variant.toLocaleString('en-US')} users per variant ` +
      `(${plan.total_sample_size.toLocaleString('en-US')} in all) to detect a change from ${pct(plan.baseline_conversion_rate)} ` +
      `to ${pct(plan.treatment_rate)} with ${pct(plan.power)} power at a two-sided significance level of ` +
      `${+plan.alpha_per_comparison.toPrecision(4)} per comparison.`,
  ];
  if (days !== null && dailyTraffic !== null) {
    lines.push(`At ${dailyTraffic.toLocaleString('en-US')} users a day this takes about ${days} day${days === 1 ? '' : 's'}.`);
    lines.push(days < 7
      ? 'Run at least one full week anyway, so that every weekday is represented.'
      : `Round the run up to whole weeks (${Math.ceil(days / 7)}) so that weekly cycles are represented evenly.`);
  }
  if (plan.n_variants > 2 && plan.correction_method === 'none') {
    lines.push('With several treatments, choose bonferroni or benjamini_hochberg to keep false positives near the chosen level.');
  }
  lines.push('Fix the primary metric and the sample size before starting, and judge the test only once the sample is reached; ' +
    'turn on sequential testing if you need to look earlier.');
  return lines;
}

export type PowerService = ReturnType<typeof createPowerService>;

export function createPowerService() {
  return {
    sampleSize,

    mde(body: MdeBody): MdeView {
      const result = minimumDetectableEffect(body.baseline_conversion_rate, body.sample_size_per_variant, alphaOf(body), body.power, body.direction);
      if (result.value === null) throw refusal(result.reason);
      return { ...designView(body, result.value.treatment_rate), sample_size_per_variant: body.sample_size_per_variant, direction: body.direction };
    },

    runtime,

    plan(body: PlanBody): PlanView {
      const { daily_traffic: dailyTraffic, ...design } = body;
      const plan = sampleSize(design);
      const days = dailyTraffic === undefined
        ? null
        : runtime({ required_sample_size: plan.required_sample_size_per_variant, daily_traffic: dailyTraffic, n_variants: body.n_variants, traffic_share: 1 }).days;
      return {
        ...plan,
        daily_traffic: dailyTraffic ?? null,
        estimated_days: days,
        advice: advice(plan, days, dailyTraffic ?? null),
        generated_by: 'template',
      };
    },
  };
}
