/**
 * CUPED of metrics naming metric library definitions (docs/statistics.md, "Definitions in the other analyses"), with the
 * experiment's covariate (each user's pre-exposure events of the covariate metric, as for conversion metrics):
 *   proportion: y = 1 when the user has an event (as conversion metrics), cupedCompare;
 *   mean:       y = the per-user value capped as in the results (capping before CUPED), cupedCompare;
 *   ratio:      (capped numerator, denominator) with the delta-method CUPED of cupedCompareRatios;
 *   quantile:   not defined ('not_defined_for_quantiles').
 */
import { capGroups, cupedCompare, cupedCompareRatios, type CupedStats, type RatioCupedStats } from '../stats/index.js';
import { cupedComparisons, fromCupedCompare, type CupedMetric } from './cuped.js';
import { finite } from './compare.js';
import { definitionRef } from './definition-arms.js';
import type { CupedUnavailable } from './domain.js';
import type { Metric } from './snapshot.js';
import type { DefinitionSettings, ExperimentSettings, VariantUserValues } from './types.js';

/**
 * Per variant: analysed users and a row per user with events or history: [the definition's values…, covariate,
 * has history (0/1)] (tracking's userValuesWithCovariate, projected on the definition's columns).
 */
export type CovariateValues = VariantUserValues[];

interface Columns { y: number[]; x: number[]; c: number[]; withHistory: number }

/** Every analysed user's (y, x, c), zeros for the users without a row; x: the ratio's denominator, else unused. */
function columns(arm: VariantUserValues | undefined, width: number, proportion: boolean): Columns {
  const rows = arm?.rows ?? [];
  const pad = (xs: number[]) => [...xs, ...new Array(Math.max(0, (arm?.users ?? 0) - xs.length)).fill(0)];
  return {
    y: pad(rows.map((r) => (proportion ? (r[0] > 0 ? 1 : 0) : r[0]))),
    x: pad(rows.map((r) => (width > 1 ? r[1] : 1))),
    c: pad(rows.map((r) => r[width])),
    withHistory: rows.filter((r) => r[width + 1] > 0).length,
  };
}

const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const dot = (xs: number[], ys: number[]) => xs.reduce((a, v, i) => a + v * ys[i], 0);

export function definitionCupedMetric(
  e: ExperimentSettings, metric: Metric, d: DefinitionSettings, values: CovariateValues, reason: CupedUnavailable | null,
): CupedMetric & { definition: ReturnType<typeof definitionRef> } {
  const definition = definitionRef(d);
  if (d.kind === 'quantile') return { ...cupedComparisons(e, metric, 'not_defined_for_quantiles', (_c, _t, none) => none), definition };
  const width = d.kind === 'ratio' ? 2 : 1;
  const data = new Map(values.map((v) => [v.variantId, v]));
  const arms = e.variants.map((v) => columns(data.get(v.id), width, d.kind === 'proportion'));
  // Capping before CUPED: the pooled cap over every variant, as in the results (the numerator of a ratio).
  const capped = d.kind === 'proportion' ? null : capGroups(arms.map((a) => a.y), d.capping);
  arms.forEach((a, i) => { if (capped) a.y = capped.groups[i].values; });
  const byId = new Map(e.variants.map((v, i) => [v.id, arms[i]]));
  const metricResult = cupedComparisons(e, metric, reason, (control, v, none) => {
    const c = byId.get(control.id)!;
    const t = byId.get(v.id)!;
    const users = c.y.length + t.y.length;
    const share = users > 0 ? (c.withHistory + t.withHistory) / users : null;
    if (d.kind !== 'ratio') {
      const stats = (a: Columns): CupedStats => ({ n: a.y.length, sumY: total(a.y), sumY2: dot(a.y, a.y), sumX: total(a.c), sumX2: dot(a.c, a.c), sumXY: dot(a.c, a.y) });
      return fromCupedCompare(none, cupedCompare(stats(c), stats(t), e.confidence_level), share);
    }
    const stats = (a: Columns): RatioCupedStats => ({
      n: a.y.length, sum_x: total(a.y), sum_y: total(a.x), sum_c: total(a.c), sum_x2: dot(a.y, a.y), sum_y2: dot(a.x, a.x),
      sum_c2: dot(a.c, a.c), sum_xy: dot(a.y, a.x), sum_xc: dot(a.y, a.c), sum_yc: dot(a.x, a.c),
    });
    const r = cupedCompareRatios(stats(c), stats(t), e.confidence_level);
    if (!r || r.p_value === null) return { ...none, share_with_history: share, unavailable_reason: 'insufficient_data' };
    if (r.reason === 'no_covariate_variance') return { ...none, share_with_history: share, unavailable_reason: 'no_covariate_variance' };
    const lower = finite(r.ci_lower);
    const upper = finite(r.ci_upper);
    return {
      ...none,
      adjusted_effect: finite(r.adjusted_difference),
      unadjusted_effect: finite(r.unadjusted_difference),
      confidence_interval: lower === null || upper === null ? null : { lower, upper },
      variance_reduction: finite(r.variance_reduction),
      share_with_history: share,
      theta: finite(r.theta),
      p_value: finite(r.p_value),
    };
  });
  return { ...metricResult, definition };
}
