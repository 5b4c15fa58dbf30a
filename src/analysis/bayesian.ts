/**
 * Beta-Binomial analysis of the primary metric's conversion rate with the experiment's bayesian_config
 * (src/stats/bayesian.ts): posteriors, probability to beat the control, expected loss, ROPE and a decision.
 */
import { BAYESIAN_DEFAULTS, type BayesianConfig, type BayesianDecision } from './domain.js';
import { betaBinomialAnalysis, bayesianDecision, credibleInterval, normalBayes, normalInterval, posterior } from '../stats/index.js';
import { definitionArms, definitionRef, type NamedDefinition, type ValueArm } from './definition-arms.js';
import { rowCount } from './definition-stats.js';
import { ENGINE_VERSION } from './domain.js';
import type { ExperimentSettings } from './types.js';
import { finite } from './compare.js';
import { controlOf, primaryMetric, totalsOf, type ArmTotals } from './snapshot.js';
import type { BayesianBlock } from './model.js';

export type { BayesianBlock };
export type BayesianVariant = BayesianBlock['variants'][number];

/**
 * The experiment-level decision: a winner if any treatment is one; else, when every treatment may stop, futile if
 * any is futile, equivalent otherwise; else continue.
 */
function overall(decisions: BayesianDecision[]): BayesianDecision {
  if (decisions.includes('STOP_WINNER')) return 'STOP_WINNER';
  if (decisions.length > 0 && decisions.every((d) => d === 'STOP_FUTILE' || d === 'STOP_EQUIVALENT')) {
    return decisions.includes('STOP_FUTILE') ? 'STOP_FUTILE' : 'STOP_EQUIVALENT';
  }
  return 'CONTINUE';
}

/**
 * null when there is no metric (the primary, unless one is given) or no control. `named`: the metric's definition and
 * per-user values; a proportion is analysed as conversion, a mean or ratio by the normal model on the relative effect
 * (src/stats/bayesian-normal.ts), a quantile not at all (unavailable_reason).
 */
export function bayesianBlock(
  e: ExperimentSettings, totals: Map<string, ArmTotals>, metric = primaryMetric(e), named?: NamedDefinition,
): BayesianBlock | null {
  const control = controlOf(e);
  if (!metric || !control) return null;
  const config: BayesianConfig = { ...BAYESIAN_DEFAULTS, ...(e.bayesian_config as Partial<BayesianConfig> | null) };
  const arms = named ? definitionArms(named, e.variants) : { kind: 'proportion' as const, totals };
  const decisions: BayesianDecision[] = [];
  const variants = arms.kind === 'proportion'
    ? betaBinomialVariants(e, arms.totals, config, control.id, decisions)
    : arms.kind === 'quantile' ? quantileVariants(e, named!) : normalVariants(e, arms.arms, config, control.id, decisions);
  return {
    engine_version: ENGINE_VERSION,
    metric_id: metric.id,
    metric_name: metric.name,
    prior: { family: config.prior_family, alpha: config.alpha, beta: config.beta },
    credible_level: config.credible_level,
    loss_threshold: config.loss_threshold,
    rope: config.rope,
    variants,
    bayesian_decision: overall(decisions),
    ...(named ? {
      definition: { ...definitionRef(named.definition), model: arms.kind === 'proportion' ? 'beta_binomial' as const : 'normal' as const },
      ...(arms.kind === 'quantile' ? { unavailable_reason: 'not_defined_for_quantiles' as const } : {}),
    } : {}),
  };
}

const noTest = (v: ExperimentSettings['variants'][number], n: number, withEvents: number): BayesianVariant => ({
  variant_id: v.id, variant_name: v.name, is_control: v.is_control, sample_size: n, conversions: withEvents,
  posterior_alpha: null, posterior_beta: null, posterior_mean: null, credible_interval: null,
  prob_beat_control: null, expected_loss: null, rope_probability: null, decision: null,
});

/** Conversion: Beta-Binomial posteriors with the configured prior. */
/** What a treatment's analysis says, either model's: its probabilities, and its decision (recorded in `decisions`). */
function judged(
  r: { prob_treatment_beats_control: number | null; expected_loss_treatment: number | null; rope_probability: number | null } | null | undefined,
  config: BayesianConfig, decisions: BayesianDecision[],
) {
  // No analysis, or one without a probability or a loss (a control value of 0 under the normal model): keep going.
  const decision: BayesianDecision = r && r.prob_treatment_beats_control !== null && r.expected_loss_treatment !== null
    ? bayesianDecision({
        probabilityToBeat: r.prob_treatment_beats_control,
        expectedLoss: r.expected_loss_treatment,
        ropeProbability: r.rope_probability,
        lossThreshold: config.loss_threshold,
        credibleLevel: config.credible_level,
      })
    : 'CONTINUE';
  decisions.push(decision);
  return {
    prob_beat_control: finite(r?.prob_treatment_beats_control),
    expected_loss: finite(r?.expected_loss_treatment),
    rope_probability: finite(r?.rope_probability),
    decision,
  };
}

function betaBinomialVariants(
  e: ExperimentSettings, totals: Map<string, ArmTotals>, config: BayesianConfig, controlId: string, decisions: BayesianDecision[],
): BayesianVariant[] {
  const prior: [number, number] = [config.alpha, config.beta];
  const c = totalsOf(totals, controlId);
  const controlArm = { conversions: c.converters, n: c.users };
  return e.variants.map((v): BayesianVariant => {
    const t = totalsOf(totals, v.id);
    const post = posterior({ conversions: t.converters, n: t.users }, prior);
    const ci = post && credibleInterval(post, config.credible_level);
    const base: BayesianVariant = {
      ...noTest(v, t.users, t.converters),
      posterior_alpha: post?.alpha ?? null,
      posterior_beta: post?.beta ?? null,
      posterior_mean: post ? finite(post.alpha / (post.alpha + post.beta)) : null,
      credible_interval: ci ? { lower: ci[0], upper: ci[1] } : null,
    };
    if (v.is_control) return base;
    const analysis = betaBinomialAnalysis(controlArm, { conversions: t.converters, n: t.users }, {
      prior, credibleLevel: config.credible_level, rope: config.rope,
    });
    return { ...base, ...judged(analysis, config, decisions) };
  });
}

/** Mean and ratio definitions: normal posteriors (flat prior) of each arm's value; loss and ROPE on the relative effect. */
function normalVariants(
  e: ExperimentSettings, arms: Map<string, ValueArm>, config: BayesianConfig, controlId: string, decisions: BayesianDecision[],
): BayesianVariant[] {
  const asNormal = (a: ValueArm) => (a.value === null || a.variance === null ? null : { mean: a.value, variance: a.variance });
  const c = asNormal(arms.get(controlId)!);
  return e.variants.map((v): BayesianVariant => {
    const arm = arms.get(v.id)!;
    const t = asNormal(arm);
    const base = { ...noTest(v, arm.n, arm.withEvents), posterior_mean: finite(arm.value) };
    const options = { credibleLevel: config.credible_level, rope: config.rope };
    const own = t && normalInterval(t, config.credible_level);
    const withInterval = { ...base, credible_interval: own ? { lower: own[0], upper: own[1] } : null };
    if (v.is_control) return withInterval;
    return { ...withInterval, ...judged(c && t ? normalBayes(c, t, options) : null, config, decisions) };
  });
}

/** Quantile definitions: no Bayesian method here; the arms' sizes only. */
function quantileVariants(e: ExperimentSettings, named: NamedDefinition): BayesianVariant[] {
  const data = new Map(named.values.map((v) => [v.variantId, v]));
  return e.variants.map((v) => noTest(v, data.get(v.id)?.users ?? 0, rowCount(data.get(v.id))));
}
