/**
 * What the analyses beyond the results' test (sequential, Bayesian, sample size) need of a metric that names a metric
 * library definition, per variant, from its per-user values (docs/statistics.md, "Definitions in the other analyses"):
 *   proportion: the conversion totals (users, users with an event): analysed exactly as a conversion metric;
 *   mean:       the per-user values (0 without events) capped as in the results, their mean m and Var(m) = s²/n;
 *   ratio:      the ratio of means R of (capped numerator, denominator) and its delta-method Var(R) (ratioArm);
 *   quantile:   none (no sequential, Bayesian or power method is defined here for quantiles).
 */
import { capGroups, ratioArm, summaryFromSums, type NormalDifference } from '../stats/index.js';
import { perUser, ratioStatsOf } from './definitions.js';
import type { ArmTotals, Variant } from './snapshot.js';
import type { DefinitionSettings, VariantUserValues } from './types.js';

/** A metric's definition and its per-user values (results' DefinitionInputs entry). */
export interface NamedDefinition {
  definition: DefinitionSettings;
  values: VariantUserValues[];
}

/** One variant of a mean or ratio definition. */
export interface ValueArm {
  n: number;
  withEvents: number;
  /** mean: Σ capped values; ratio: Σ capped numerator */
  sum: number;
  /** mean: n; ratio: Σ denominator */
  sumY: number;
  /** m or R; null without users (or a zero denominator) */
  value: number | null;
  /** the variance of `value` (s²/n, or the delta method's); null with fewer than 2 users */
  variance: number | null;
}

export type DefinitionArms =
  | { kind: 'proportion'; totals: Map<string, ArmTotals> }
  | { kind: 'mean' | 'ratio'; arms: Map<string, ValueArm> }
  | { kind: 'quantile' };

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const sumSq = (xs: readonly number[]) => xs.reduce((a, b) => a + b * b, 0);

/** Per variant id, the definition's arm statistics, capping applied at the pooled cap over every variant. */
export function definitionArms(named: NamedDefinition, variants: readonly Variant[]): DefinitionArms {
  const d = named.definition;
  const data = new Map(named.values.map((v) => [v.variantId, v]));
  if (d.kind === 'quantile') return { kind: 'quantile' };
  const withEvents = (id: string) => (data.get(id)?.rows ?? []).filter((r) => r[0] > 0).length;
  if (d.kind === 'proportion') {
    return { kind: 'proportion', totals: new Map(variants.map((v) => {
      const converters = withEvents(v.id);
      return [v.id, { users: data.get(v.id)?.users ?? 0, converters, eventCount: 0, countSquares: 0, valueSum: converters, valueSquares: converters }];
    })) };
  }
  const xs = variants.map((v) => perUser(data.get(v.id), 0, true));
  const capped = capGroups(xs, d.capping);
  const arms = new Map<string, ValueArm>();
  variants.forEach((v, i) => {
    const x = capped?.groups[i].values ?? xs[i];
    if (d.kind === 'mean') {
      const s = summaryFromSums(x.length, sum(x), sumSq(x));
      const n = x.length;
      arms.set(v.id, { n, withEvents: withEvents(v.id), sum: sum(x), sumY: n, value: n > 0 ? s.mean : null, variance: n >= 2 ? s.variance / n : null });
      return;
    }
    const y = perUser(data.get(v.id), 1, true);
    const r = ratioArm(ratioStatsOf(x, y));
    arms.set(v.id, { n: x.length, withEvents: withEvents(v.id), sum: sum(x), sumY: sum(y), value: r?.ratio ?? null, variance: r?.variance ?? null });
  });
  return { kind: d.kind, arms };
}

/**
 * The normal difference treatment − control of a mean or ratio arm pair for the mSPRT, the mixing variance
 * τ² = (mde × pooled value)² as for conversion (pooled: Σ sum / Σ sumY over the two arms); null when either arm has no
 * estimate or variance.
 */
export function normalDifference(c: ValueArm, t: ValueArm, mde: number): NormalDifference | null {
  if (c.value === null || t.value === null || c.variance === null || t.variance === null) return null;
  const pooled = (c.sum + t.sum) / (c.sumY + t.sumY);
  return { difference: t.value - c.value, variance: c.variance + t.variance, tauSquared: (mde * pooled) ** 2 };
}

/** How the other analyses name the definition they used (their optional `definition` field). */
export const definitionRef = (d: DefinitionSettings) => ({ metric_definition_id: d.id, version: d.version, kind: d.kind });
