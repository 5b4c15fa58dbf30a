/**
 * Beta-Binomial analysis of the primary metric's conversion rate with the experiment's bayesian_config
 * (src/stats/bayesian.ts): posteriors, probability to beat the control, expected loss, ROPE and a decision.
 */
import { BAYESIAN_DEFAULTS, type BayesianConfig, type BayesianDecision } from './domain.js';
import { betaBinomialAnalysis, bayesianDecision, credibleInterval, posterior } from '../stats/index.js';
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

/** null when there is no primary metric or no control. */
export function bayesianBlock(e: ExperimentSettings, totals: Map<string, ArmTotals>): BayesianBlock | null {
  const metric = primaryMetric(e);
  const control = controlOf(e);
  if (!metric || !control) return null;
  const config: BayesianConfig = { ...BAYESIAN_DEFAULTS, ...(e.bayesian_config as Partial<BayesianConfig> | null) };
  const prior: [number, number] = [config.alpha, config.beta];
  const c = totalsOf(totals, control.id);
  const controlArm = { conversions: c.converters, n: c.users };
  const decisions: BayesianDecision[] = [];
  const variants = e.variants.map((v): BayesianVariant => {
    const t = totalsOf(totals, v.id);
    const post = posterior({ conversions: t.converters, n: t.users }, prior);
    const ci = post && credibleInterval(post, config.credible_level);
    const base: BayesianVariant = {
      variant_id: v.id,
      variant_name: v.name,
      is_control: v.is_control,
      sample_size: t.users,
      conversions: t.converters,
      posterior_alpha: post?.alpha ?? null,
      posterior_beta: post?.beta ?? null,
      posterior_mean: post ? finite(post.alpha / (post.alpha + post.beta)) : null,
      credible_interval: ci ? { lower: ci[0], upper: ci[1] } : null,
      prob_beat_control: null,
      expected_loss: null,
      rope_probability: null,
      decision: null,
    };
    if (v.is_control) return base;
    const analysis = betaBinomialAnalysis(controlArm, { conversions: t.converters, n: t.users }, {
      prior, credibleLevel: config.credible_level, rope: config.rope,
    });
    const decision = analysis
      ? bayesianDecision({
          probabilityToBeat: analysis.prob_treatment_beats_control,
          expectedLoss: analysis.expected_loss_treatment,
          ropeProbability: analysis.rope_probability,
          lossThreshold: config.loss_threshold,
          credibleLevel: config.credible_level,
        })
      : 'CONTINUE';
    decisions.push(decision);
    return {
      ...base,
      prob_beat_control: finite(analysis?.prob_treatment_beats_control),
      expected_loss: finite(analysis?.expected_loss_treatment),
      rope_probability: finite(analysis?.rope_probability),
      decision,
    };
  });
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
  };
}
