/**
 * What the analyses beyond the results' test (sequential, Bayesian, sample size) need of a metric that names a metric
 * library definition, per variant, from its per-user values (docs/statistics.md, "Definitions in the other analyses"):
 *   proportion: the conversion totals (users, users with an event): analysed exactly as a conversion metric;
 *   mean:       the per-user values (0 without events) capped as in the results, their mean m and Var(m) = s²/n;
 *   ratio:      the ratio of means R of (capped numerator, denominator) and its delta-method Var(R) (ratioArm);
 *   quantile:   none (no sequential, Bayesian or power method is defined here for quantiles).
 */
import { ratioArm, summaryFromSums, type NormalDifference } from '../stats/index.js';
import { NO_ARM } from './definition-stats.js';
import { definitionStatsFromValues } from './definitions.js';
import type { ArmTotals, Variant } from './snapshot.js';
import type { DefinitionSettings, VariantUserColumns, VariantUserValues } from './types.js';

/** A metric's definition and its per-user values (results' DefinitionInputs entry). */
export interface NamedDefinition {
  definition: DefinitionSettings;
  values: ReadonlyArray<VariantUserValues | VariantUserColumns>;
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

/** Per variant id, the definition's arm statistics, capping applied at the pooled cap over every variant (as in the results). */
export function definitionArms(named: NamedDefinition, variants: readonly Variant[]): DefinitionArms {
  const d = named.definition;
  if (d.kind === 'quantile') return { kind: 'quantile' };
  // The confidence level only matters to quantiles.
  const stats = definitionStatsFromValues(d, variants, named.values, 0.95);
  const armOf = (id: string) => stats.arms.get(id) ?? NO_ARM;
  if (d.kind === 'proportion') {
    return { kind: 'proportion', totals: new Map(variants.map((v) => {
      const { users, withEvents: converters } = armOf(v.id);
      return [v.id, { users, converters, eventCount: 0, countSquares: 0, valueSum: converters, valueSquares: converters }];
    })) };
  }
  const arms = new Map<string, ValueArm>();
  for (const v of variants) {
    const a = armOf(v.id);
    if (d.kind === 'mean') {
      const n = a.users;
      const s = summaryFromSums(n, a.sum, a.sumSquares);
      arms.set(v.id, { n, withEvents: a.withEvents, sum: a.sum, sumY: n, value: n > 0 ? s.mean : null, variance: n >= 2 ? s.variance / n : null });
      continue;
    }
    const stats = a.ratio ?? { n: 0, sum_x: 0, sum_y: 0, sum_x2: 0, sum_y2: 0, sum_xy: 0 };
    const r = ratioArm(stats);
    arms.set(v.id, { n: stats.n, withEvents: a.withEvents, sum: stats.sum_x, sumY: stats.sum_y, value: r?.ratio ?? null, variance: r?.variance ?? null });
  }
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
