/**
 * Guardrails of guarded rollouts that name a metric library definition (docs/statistics.md, "Guardrails on metric
 * library definitions"): the definition's per-user values over the stage's windows (tracking's guardrail read model),
 * handled as results handle them, then the guardrails' sequential test (src/stats/guardrail.ts):
 *   mean:  per-user count or value sum (0 for a user of the group without events), capped as defined (a percentile
 *          cap pooled over baseline and exposed users, as results pool it over variants), mSPRT on the means;
 *   ratio: per-user numerator (capped as defined) and denominator, mSPRT on the ratios of means with the
 *          delta-method variance (guardrailMsprtRatio).
 * proportion and quantile definitions are not guardrails (the schedule refuses them): a guardrail is a one-sided
 * sequential test looked at every minute, and none is defined here for a quantile; a proportion is a mean of a
 * 0/1 value, which a mean definition of the event's count already guards.
 */
import { capGroups, guardrailMsprt, guardrailMsprtRatio, type GuardrailDirection, type GuardrailResult } from '../stats/index.js';
import { perUser, ratioStatsOf, sampleOf } from './definitions.js';
import type { DefinitionSettings, VariantUserValues } from './types.js';

/** The definition kinds a guardrail may name. */
export const GUARDRAIL_DEFINITION_KINDS = ['mean', 'ratio'] as const;
export const isGuardrailKind = (kind: DefinitionSettings['kind']): kind is (typeof GUARDRAIL_DEFINITION_KINDS)[number] =>
  (GUARDRAIL_DEFINITION_KINDS as readonly string[]).includes(kind);

export interface DefinitionGuardrailResult extends GuardrailResult {
  /** The cap applied (ratio: to the numerator); null without capping or without values. */
  cap: number | null;
  /** Users of both groups whose value was above the cap. */
  users_capped: number;
}

const INVALID: DefinitionGuardrailResult = {
  degraded: false, baseline_mean: null, treatment_mean: null, difference: null, relative_difference: null, z: null,
  log_likelihood_ratio: null, log_threshold: null, always_valid_p: 1, reason: 'invalid_input', cap: null, users_capped: 0,
};

/**
 * The guardrail test of one mean or ratio definition on the baseline and exposed groups' per-user values (rows in
 * the order of `aggregatesOf(d)`); null for a kind a guardrail does not take.
 */
export function definitionGuardrail(
  d: DefinitionSettings, groups: { baseline: VariantUserValues; exposed: VariantUserValues },
  direction: GuardrailDirection, confidence: number,
): DefinitionGuardrailResult | null {
  if (!isGuardrailKind(d.kind)) return null;
  const arms = [groups.baseline, groups.exposed];
  const xs = arms.map((g) => perUser(g, 0, true));
  const capped = capGroups(xs, d.capping);
  if (!capped) return INVALID;
  const [xb, xt] = capped.groups.map((g) => g.values);
  const capping = { cap: capped.cap, users_capped: capped.capped_count };
  if (d.kind === 'mean') {
    return { ...guardrailMsprt({ baseline: sampleOf(xb), treatment: sampleOf(xt), direction, confidence }), ...capping };
  }
  const [yb, yt] = arms.map((g) => perUser(g, 1, true));
  return { ...guardrailMsprtRatio({ baseline: ratioStatsOf(xb, yb), treatment: ratioStatsOf(xt, yt), direction, confidence }), ...capping };
}
