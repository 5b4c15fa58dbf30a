/**
 * Metrics that name a metric library definition, analysed per the definition (docs/statistics.md, "Metric library
 * definitions in results") from the per-user values tracking counted (`VariantUserValues`):
 *   proportion: Fisher's exact test on users with an event (as conversion metrics);
 *   mean:       per-user count or value sum (0 without events), capped, then Welch's t-test (as value metrics);
 *   ratio:      per-user numerator and denominator (numerator capped), delta-method comparison (compareRatios);
 *   quantile:   the p-th quantile of the per-user values of users with at least one event (compareQuantiles).
 * Treatments' p-values are corrected together with the stored method, as for every metric.
 */
import { adjust, compareQuantiles, compareRatios, welchTTest, summaryFromSums, type RatioStats } from '../stats/index.js';
import type { CorrectionMethod } from './domain.js';
import { alphaFor, finite, variantResults, type MetricKind } from './compare.js';
import type { DefinitionResult, MetricResult, VariantResult } from './model.js';
import { metricHeader, type ArmTotals, type Metric, type Variant } from './snapshot.js';
import { columnsOf, definitionStatsFromColumns, NO_ARM, type DefinitionArm, type DefinitionStats } from './definition-stats.js';
import type { DefinitionSettings, EventAggregate, VariantUserColumns, VariantUserValues } from './types.js';

type Reason = DefinitionResult['variants'][number]['unavailable_reason'];

/** The per-user aggregates a definition reads, in the order `VariantUserValues.rows` holds them. */
export function aggregatesOf(d: DefinitionSettings): EventAggregate[] {
  if (d.kind === 'ratio') return [d.numerator!, d.denominator!];
  return [d.value!];
}

/**
 * Several definitions' aggregates read in one pass: the combined list (each event's count among them, which says
 * whether a user has an event of it), and per definition which columns are its aggregates and its events' counts.
 */
export function combinedAggregates(definitions: readonly DefinitionSettings[]): {
  aggregates: EventAggregate[]; columns: Map<string, { values: number[]; presence: number[] }>;
} {
  const aggregates: EventAggregate[] = [];
  const index = (a: EventAggregate) => {
    const found = aggregates.findIndex((x) => x.event_name === a.event_name && x.aggregate === a.aggregate);
    return found >= 0 ? found : aggregates.push({ event_name: a.event_name, aggregate: a.aggregate }) - 1;
  };
  const columns = new Map<string, { values: number[]; presence: number[] }>();
  for (const d of definitions) {
    const own = aggregatesOf(d);
    columns.set(d.id, {
      values: own.map(index),
      presence: [...new Set(own.map((a) => a.event_name))].map((event_name) => index({ event_name, aggregate: 'count' })),
    });
  }
  return { aggregates, columns };
}

/** One definition's per-user values out of a combined read: its columns, for the users with one of its events. */
export function projectUserValues(values: readonly VariantUserValues[], cols: { values: number[]; presence: number[] }): VariantUserValues[] {
  return values.map((v) => ({
    variantId: v.variantId,
    users: v.users,
    rows: v.rows.filter((r) => cols.presence.some((i) => r[i] > 0)).map((r) => cols.values.map((i) => r[i])),
  }));
}

/** One comparison of a treatment with the control, in the definition block's terms. */
interface Comparison {
  p_value: number;
  difference: number | null;
  difference_ci: [number | null, number | null];
  relative: number | null;
  relative_ci: [number | null, number | null];
  reason: Reason;
}

const interval = ([lower, upper]: [number | null | undefined, number | null | undefined]) => {
  const lo = finite(lower);
  const hi = finite(upper);
  return lo === null || hi === null ? null : { lower: lo, upper: hi };
};

/** Column `i` of every row, padded with zeros for the analysed users without events. */
export function perUser(arm: VariantUserValues | undefined, i: number, pad: boolean): number[] {
  const values = (arm?.rows ?? []).map((r) => r[i]);
  if (pad) for (let k = values.length; k < (arm?.users ?? 0); k += 1) values.push(0);
  return values;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const sumSq = (xs: readonly number[]) => xs.reduce((a, b) => a + b * b, 0);
const dot = (xs: readonly number[], ys: readonly number[]) => xs.reduce((a, x, i) => a + x * ys[i], 0);
/** The delta method's sufficient statistics of per-user numerators and denominators (src/stats/ratio.ts). */
export const ratioStatsOf = (x: readonly number[], y: readonly number[]) =>
  ({ n: x.length, sum_x: sum(x), sum_y: sum(y), sum_x2: sumSq(x), sum_y2: sumSq(y), sum_xy: dot(x, y) });
/** n, sum and sum of squares of per-user values. */
export const sampleOf = (x: readonly number[]) => ({ n: x.length, sum: sum(x), sum_squares: sumSq(x) });

/** Every variant's values from the per-arm comparisons (control: none), p-values corrected over the treatments. */
function assemble(
  variants: readonly Variant[], arms: Map<string, { n: number; withEvents: number; value: number | null; capped: number }>,
  comparisons: Map<string, Comparison>, method: CorrectionMethod, confidenceLevel: number,
): { variants: VariantResult[]; definition: DefinitionResult['variants'] } {
  const tested = [...comparisons.keys()];
  const adjusted = new Map(adjust(tested.map((id) => comparisons.get(id)!.p_value), method).map((p, i) => [tested[i], p]));
  const alpha = alphaFor(confidenceLevel);
  const out = { variants: [] as VariantResult[], definition: [] as DefinitionResult['variants'] };
  for (const v of variants) {
    const arm = arms.get(v.id) ?? { n: 0, withEvents: 0, value: null, capped: 0 };
    const c = comparisons.get(v.id);
    const adjustedP = adjusted.get(v.id) ?? null;
    out.variants.push({
      variant_id: v.id,
      variant_name: v.name,
      is_control: v.is_control,
      sample_size: arm.n,
      conversions: arm.withEvents,
      mean: finite(arm.value),
      p_value: c ? finite(c.p_value) : null,
      adjusted_p_value: finite(adjustedP),
      is_significant: adjustedP !== null && adjustedP < alpha,
      relative_lift: c ? finite(c.relative) : null,
      confidence_interval: c ? interval(c.relative_ci) : null,
    });
    out.definition.push({
      variant_id: v.id,
      value: finite(arm.value),
      users_with_events: arm.withEvents,
      users_capped: arm.capped,
      difference: c ? finite(c.difference) : null,
      difference_ci: c ? interval(c.difference_ci) : null,
      relative_difference: c ? finite(c.relative) : null,
      relative_ci: c ? interval(c.relative_ci) : null,
      unavailable_reason: c ? c.reason : null,
    });
  }
  return out;
}

/** Each treatment against the control (none without a control), by variant id. */
function eachTreatment(variants: readonly Variant[], compare: (controlId: string, treatmentId: string) => Comparison): Map<string, Comparison> {
  const control = variants.find((v) => v.is_control);
  return new Map(control ? variants.filter((v) => !v.is_control).map((v) => [v.id, compare(control.id, v.id)]) : []);
}

/** A src/stats comparison (ratio or quantile) in the definition block's terms. */
function fromStats(
  c: { p_value: number; difference: number | null; ci_lower: number | null; ci_upper: number | null; relative_ci_lower: number | null; relative_ci_upper: number | null; reason: Reason },
  relative: number | null,
): Comparison {
  return { p_value: c.p_value, difference: c.difference, difference_ci: [c.ci_lower, c.ci_upper], relative, relative_ci: [c.relative_ci_lower, c.relative_ci_upper], reason: c.reason };
}

export type { DefinitionArm, DefinitionStats } from './definition-stats.js';

const armOf = (stats: DefinitionStats, id: string) => stats.arms.get(id) ?? NO_ARM;
const cappedUsers = (stats: DefinitionStats) => [...stats.arms.values()].reduce((n, a) => n + a.capped, 0);

/**
 * The per-user values' statistics (definition-stats.ts): proportion and mean capped (pooled percentile over every
 * analysed user's value, zeros included), ratio with its numerator capped, quantile summarised over the users with
 * events. So that per-user values (results) and aggregates computed elsewhere (the warehouse's SQL) go through the
 * same comparison code (definitionResultFromStats).
 */
export function definitionStatsFromValues(
  d: DefinitionSettings, variants: readonly Variant[], values: ReadonlyArray<VariantUserValues | VariantUserColumns>, confidenceLevel: number,
): DefinitionStats {
  const width = aggregatesOf(d).length;
  return definitionStatsFromColumns(d, variants, values.map((v) => columnsOf(v, width)), confidenceLevel);
}

/**
 * A variant's value per the definition: the rate of users with an event, the (capped) mean per analysed user, the
 * ratio of the sums, or the p-th quantile (null without users, a denominator or values).
 */
export function definitionValue(d: DefinitionSettings, a: DefinitionArm): number | null {
  if (d.kind === 'quantile') return finite(a.quantile?.quantile);
  if (d.kind === 'ratio') return a.ratio && a.ratio.sum_y !== 0 ? finite(a.ratio.sum_x / a.ratio.sum_y) : null;
  return a.users === 0 ? null : finite((d.kind === 'proportion' ? a.withEvents : a.sum) / a.users);
}

/** The capping a mean or ratio definition applied (null for none and for the other kinds), with the users it touched. */
export function cappingOf(d: DefinitionSettings, cap: number | null, usersCapped: number): DefinitionResult['capping'] {
  if ((d.kind !== 'mean' && d.kind !== 'ratio') || d.capping.type === 'none') return null;
  return { type: d.capping.type, p: d.capping.type === 'percentile' ? d.capping.p : null, cap: finite(cap), users_capped: usersCapped };
}

/** proportion and mean: the inline metrics' tests (Fisher, Welch) on the definition's per-user values, capped. */
function meanLike(d: DefinitionSettings, variants: readonly Variant[], stats: DefinitionStats, method: CorrectionMethod, level: number) {
  const kind: MetricKind = d.kind === 'proportion' ? 'conversion' : 'value';
  const totals = new Map<string, ArmTotals>();
  const arms = new Map<string, { n: number; withEvents: number; value: number | null; capped: number }>();
  for (const v of variants) {
    const a = armOf(stats, v.id);
    const n = a.users;
    totals.set(v.id, { users: n, converters: a.withEvents, eventCount: 0, countSquares: 0, valueSum: a.sum, valueSquares: a.sumSquares });
    arms.set(v.id, { n, withEvents: a.withEvents, value: definitionValue(d, a), capped: a.capped });
  }
  // The inline tests give p-values and relative lifts; the absolute difference and its interval are added here.
  const inline = variantResults(kind, variants, totals, method, level);
  const control = variants.find((v) => v.is_control);
  const comparisons = new Map<string, Comparison>();
  if (control) {
    const ct = totals.get(control.id)!;
    for (const [i, v] of variants.entries()) {
      if (v.is_control) continue;
      const tt = totals.get(v.id)!;
      const sc = kind === 'conversion' ? summaryFromSums(ct.users, ct.converters, ct.converters) : summaryFromSums(ct.users, ct.valueSum, ct.valueSquares);
      const st = kind === 'conversion' ? summaryFromSums(tt.users, tt.converters, tt.converters) : summaryFromSums(tt.users, tt.valueSum, tt.valueSquares);
      const w = welchTTest(sc, st, level);
      const r = inline[i];
      comparisons.set(v.id, {
        p_value: r.p_value ?? 1,
        difference: w.difference,
        difference_ci: [w.ci_lower, w.ci_upper],
        relative: r.relative_lift,
        relative_ci: [r.confidence_interval?.lower ?? null, r.confidence_interval?.upper ?? null],
        reason: w.reason,
      });
    }
  }
  return assemble(variants, arms, comparisons, method, level);
}

/** ratio: the delta method on per-user (capped numerator, denominator) sums. */
function ratio(d: DefinitionSettings, variants: readonly Variant[], stats: DefinitionStats, method: CorrectionMethod, level: number) {
  const none: RatioStats = { n: 0, sum_x: 0, sum_y: 0, sum_x2: 0, sum_y2: 0, sum_xy: 0 };
  const ratioOf = (id: string) => armOf(stats, id).ratio ?? none;
  const arms = new Map(variants.map((v) => {
    const a = armOf(stats, v.id);
    return [v.id, { n: ratioOf(v.id).n, withEvents: a.withEvents, value: definitionValue(d, a), capped: a.capped }];
  }));
  const comparisons = eachTreatment(variants, (c, t) => {
    const r = compareRatios(ratioOf(c), ratioOf(t), level);
    return fromStats(r, r.relative_lift);
  });
  return assemble(variants, arms, comparisons, method, level);
}

/** quantile: the order-statistic summaries of users with events, compared by the asymptotic method. */
function quantile(d: DefinitionSettings, variants: readonly Variant[], stats: DefinitionStats, method: CorrectionMethod, level: number) {
  const p = d.quantile!;
  const arms = new Map(variants.map((v) => {
    const a = armOf(stats, v.id);
    return [v.id, { n: a.users, withEvents: a.withEvents, value: definitionValue(d, a), capped: 0 }];
  }));
  const comparisons = eachTreatment(variants, (c, t) => {
    const sc = armOf(stats, c).quantile;
    const st = armOf(stats, t).quantile;
    if (!sc || !st) return { p_value: 1, difference: null, difference_ci: [null, null], relative: null, relative_ci: [null, null], reason: 'insufficient_data' };
    const q = compareQuantiles(sc, st, p, level);
    return fromStats(q, q.relative_difference);
  });
  return assemble(variants, arms, comparisons, method, level);
}

const TEST_OF_KIND: Record<DefinitionSettings['kind'], MetricResult['test']> = {
  proportion: 'fisher_exact', mean: 'welch_t', ratio: 'delta_method', quantile: 'quantile_order_statistic',
};

/** A metric that names a definition, analysed per the definition; `definition` records what was used. */
export function definitionMetricResult(
  m: Metric, d: DefinitionSettings, values: ReadonlyArray<VariantUserValues | VariantUserColumns>, variants: readonly Variant[],
  options: { correction_method: CorrectionMethod; confidence_level: number },
): MetricResult {
  return definitionResultFromStats(m, d, variants, definitionStatsFromValues(d, variants, values, options.confidence_level), options);
}

/** As definitionMetricResult, from the variants' sufficient statistics (the warehouse analysis computes them in SQL). */
export function definitionResultFromStats(
  m: Metric, d: DefinitionSettings, variants: readonly Variant[], stats: DefinitionStats,
  options: { correction_method: CorrectionMethod; confidence_level: number },
): MetricResult {
  const analyse = d.kind === 'ratio' ? ratio : d.kind === 'quantile' ? quantile : meanLike;
  const r = analyse(d, variants, stats, options.correction_method, options.confidence_level);
  return {
    ...metricHeader(m),
    event_name: m.event_name,
    test: TEST_OF_KIND[d.kind],
    variants: r.variants,
    definition: {
      metric_definition_id: d.id,
      version: d.version,
      kind: d.kind,
      value: d.value,
      numerator: d.numerator,
      denominator: d.denominator,
      quantile: d.quantile,
      capping: cappingOf(d, stats.cap, cappedUsers(stats)),
      sequential_unavailable_reason: d.kind === 'quantile' ? 'not_defined_for_quantiles' : null,
      cuped_unavailable_reason: d.kind === 'quantile' ? 'not_defined_for_quantiles' : null,
      variants: r.definition,
    },
  };
}
