/**
 * Interaction test between two overlapping experiments, for experiment X's primary metric: does a treatment of X
 * change the conversion rate differently for users in a variant of Y than for users in Y's control? Among users in
 * both, with p(x, y) the rate of the cell (variant x of X, variant y of Y):
 *
 *   interaction = (p(t, v) - p(c, v)) - (p(t, cY) - p(c, cY)),   se^2 = sum over the four cells of p (1 - p) / n
 *   z = interaction / se,   p = 2 (1 - Phi(|z|))
 *
 * p-values of all (treatment, variant of Y) pairs are adjusted with X's stored correction and judged at its stored
 * confidence level (spec, "How results are judged" 2).
 */
import { adjust, normalCdf } from '../../stats/index.js';
import { alphaFor } from '../../analysis/compare.js';
import type { CellStats } from '../tracking/read-model.js';
import type { Experiment } from '../experiments/read-model.js';

export interface InteractionCell {
  variant_id: string;
  other_variant_id: string;
  users: number;
  conversions: number;
  rate: number | null;
}

export interface InteractionTest {
  variant_id: string;
  other_variant_id: string;
  interaction: number | null;
  std_error: number | null;
  p_value: number | null;
  adjusted_p_value: number | null;
  is_significant: boolean;
}

export interface InteractionAnalysis {
  experiment_id: string;
  metric_id: string;
  metric_name: string;
  correction_method: Experiment['correctionMethod'];
  confidence_level: number;
  cells: InteractionCell[];
  tests: InteractionTest[];
}

export function interactionAnalysis(
  x: Experiment, y: Experiment, metric: { id: string; name: string }, stats: CellStats[],
): InteractionAnalysis {
  const cell = (vx: string, vy: string) => stats.find((s) => s.variantA === vx && s.variantB === vy);
  const cells: InteractionCell[] = x.variants.flatMap((vx) =>
    y.variants.map((vy) => {
      const s = cell(vx.id, vy.id);
      const users = s?.users ?? 0;
      const conversions = s?.converters ?? 0;
      return { variant_id: vx.id, other_variant_id: vy.id, users, conversions, rate: users > 0 ? conversions / users : null };
    }));
  const rate = (vx: string, vy: string) => cells.find((c) => c.variant_id === vx && c.other_variant_id === vy)!;
  const cx = x.variants.find((v) => v.isControl);
  const cy = y.variants.find((v) => v.isControl);
  const tests: InteractionTest[] = [];
  if (cx && cy) {
    for (const t of x.variants.filter((v) => !v.isControl)) {
      for (const v of y.variants.filter((o) => !o.isControl)) {
        const four = [rate(t.id, v.id), rate(cx.id, v.id), rate(t.id, cy.id), rate(cx.id, cy.id)];
        const test: InteractionTest = {
          variant_id: t.id, other_variant_id: v.id, interaction: null, std_error: null, p_value: null, adjusted_p_value: null, is_significant: false,
        };
        if (four.every((c) => c.rate !== null)) {
          const [tv, cv, tc, cc] = four.map((c) => c.rate as number);
          const interaction = tv - cv - (tc - cc);
          const se = Math.sqrt(four.reduce((sum, c) => sum + ((c.rate as number) * (1 - (c.rate as number))) / c.users, 0));
          test.interaction = interaction;
          test.std_error = se;
          test.p_value = se > 0 ? Math.min(1, 2 * normalCdf(-Math.abs(interaction / se))) : 1;
        }
        tests.push(test);
      }
    }
  }
  const tested = tests.filter((t) => t.p_value !== null);
  const adjusted = adjust(tested.map((t) => t.p_value as number), x.correctionMethod);
  const alpha = alphaFor(x.confidenceLevel);
  tested.forEach((t, i) => {
    t.adjusted_p_value = adjusted[i];
    t.is_significant = adjusted[i] < alpha;
  });
  return {
    experiment_id: x.id,
    metric_id: metric.id,
    metric_name: metric.name,
    correction_method: x.correctionMethod,
    confidence_level: x.confidenceLevel,
    cells,
    tests,
  };
}
