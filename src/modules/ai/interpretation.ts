/**
 * The built-in reading of an experiment's results. It uses only the results fields the spec names (summary,
 * srm, sample_size_adequate, per-metric variant numbers), so a language model's narrative never changes the facts.
 */
export const RECOMMENDATIONS = ['SHIP_VARIANT', 'KEEP_CONTROL', 'CONTINUE_TESTING', 'INCONCLUSIVE'] as const;
export type Recommendation = (typeof RECOMMENDATIONS)[number];

export interface ExperimentFacts {
  id: string;
  name: string;
  status: string;
  hypothesis: string | null;
  variants: Array<{ id: string; name: string; is_control: boolean }>;
}

export interface VariantResult {
  variant_name: string;
  sample_size: number;
  conversions?: number | null;
  mean?: number | null;
  p_value?: number | null;
  adjusted_p_value?: number | null;
  is_significant?: boolean | null;
}

export interface ResultsFacts {
  summary: {
    recommendation: Recommendation;
    recommendation_reason?: string | null;
    has_winner: boolean;
    winning_variant_id?: string | null;
  };
  srm?: { warning?: boolean | null; p_value?: number | null } | null;
  sample_size_adequate?: boolean | null;
  metrics: Array<{ name?: string | null; metric_name?: string | null; is_primary: boolean; variants: VariantResult[] }>;
}

export interface Interpretation {
  recommendation: Recommendation | null;
  summary: string;
  key_findings: string[];
  next_steps: string[];
  caveats: string[];
}

const pct = (x: number) => `${+(x * 100).toFixed(2)}%`;
const pText = (x: number) => (x < 0.001 ? 'p < 0.001' : `p = ${x.toFixed(3)}`);

function findings(experiment: ExperimentFacts, results: ResultsFacts): string[] {
  const controlName = experiment.variants.find((v) => v.is_control)?.name;
  const lines: string[] = [];
  const metrics = [...results.metrics].sort((a, b) => Number(b.is_primary) - Number(a.is_primary));
  for (const metric of metrics) {
    const label = `${metric.metric_name ?? metric.name ?? 'metric'}${metric.is_primary ? ' (primary)' : ''}`;
    const control = metric.variants.find((v) => v.variant_name === controlName);
    for (const variant of metric.variants) {
      if (variant === control) continue;
      let line = `${label}: ${variant.variant_name}`;
      if (typeof variant.mean === 'number') {
        line += ` converts at ${pct(variant.mean)}`;
        if (control && typeof control.mean === 'number') {
          line += ` against ${pct(control.mean)} for ${control.variant_name}`;
          if (control.mean > 0) line += ` (${variant.mean >= control.mean ? '+' : ''}${pct(variant.mean / control.mean - 1)} relative)`;
        }
      }
      line += ` over ${variant.sample_size} users`;
      const pValue = variant.adjusted_p_value ?? variant.p_value;
      if (typeof pValue === 'number') line += `, ${pText(pValue)}`;
      lines.push(`${line}${variant.is_significant ? ', significant.' : ', not significant.'}`);
    }
  }
  return lines;
}

const NEXT_STEPS: Record<Recommendation, string[]> = {
  SHIP_VARIANT: ['Roll the winning variant out to everyone, gradually if it touches revenue.', 'Record the result and the decision.'],
  KEEP_CONTROL: ['Keep the current experience.', 'Write down what was learned before designing the next test.'],
  CONTINUE_TESTING: ['Keep the experiment running until it reaches the planned sample size.', 'Avoid stopping early on a promising number.'],
  INCONCLUSIVE: ['Investigate the data quality problem before trusting any number.', 'Restart the experiment once the cause is fixed.'],
};

/** `results` is undefined for a draft. */
export function interpretFromTemplate(experiment: ExperimentFacts, results: ResultsFacts | undefined): Interpretation {
  if (!results) {
    return {
      recommendation: null,
      summary: `"${experiment.name}" has not started, so it has no results yet.`,
      key_findings: [],
      next_steps: ['Start the experiment, then ask again once users have been assigned.'],
      caveats: [],
    };
  }
  const { summary } = results;
  const winner = experiment.variants.find((v) => v.id === summary.winning_variant_id)?.name;
  const caveats: string[] = [];
  if (results.srm?.warning) {
    const detail = typeof results.srm.p_value === 'number' ? ` (${pText(results.srm.p_value)})` : '';
    caveats.push(`Sample ratio mismatch${detail}: users were not split as configured, so the results cannot be trusted yet.`);
  }
  if (results.sample_size_adequate === false) caveats.push('The sample is still smaller than the planned sample size.');
  const headline: Record<Recommendation, string> = {
    SHIP_VARIANT: `${winner ? `"${winner}"` : 'A variant'} beats the control: ship it.`,
    KEEP_CONTROL: 'No variant beats the control: keep the current experience.',
    CONTINUE_TESTING: 'There is no clear answer yet: keep testing.',
    INCONCLUSIVE: 'The results are inconclusive.',
  };
  return {
    recommendation: summary.recommendation,
    summary: `"${experiment.name}": ${headline[summary.recommendation]}${summary.recommendation_reason ? ` ${summary.recommendation_reason}` : ''}`,
    key_findings: findings(experiment, results),
    next_steps: NEXT_STEPS[summary.recommendation],
    caveats,
  };
}
