/**
 * A definition's per-variant sufficient statistics (`DefinitionStats`) from its per-user values in columns, without
 * materialising the analysed users without events: their value is 0 in every column, so they add nothing to sums and
 * products, and a pooled percentile cap over every analysed user's value is read from the sorted values with the run
 * of zeros between the negative and the non-negative ones. The numbers are those of padding the values with zeros,
 * capping with capGroups and summing in row order (the rows first, then the zeros), as definitionMetricResult did.
 */
import { isOpenUnit } from '../stats/numeric.js';
import { quantileOfOrdered, quantileSummaryOfSorted, type Capping, type QuantileSummary, type RatioStats } from '../stats/index.js';
import type { Variant } from './snapshot.js';
import type { DefinitionSettings, VariantUserColumns, VariantUserValues } from './types.js';

/** The statistics of one variant; what definitionResultFromStats compares (definitions.ts). */
export interface DefinitionArm {
  /** analysed users */
  users: number;
  /** proportion: users with an event; mean and ratio: users whose (numerator) value is above 0; quantile: users with an event */
  withEvents: number;
  /** users whose value was above the cap */
  capped: number;
  /** proportion and mean: sum and sum of squares of the (capped) per-user values of every analysed user */
  sum: number;
  sumSquares: number;
  /** ratio: the sufficient statistics of the capped numerator and the denominator */
  ratio?: RatioStats;
  /** quantile: the summary of the users with events (null without any) */
  quantile?: QuantileSummary | null;
}

/** Per variant id, its statistics; `cap` the cap applied (null without capping or values). */
export interface DefinitionStats {
  cap: number | null;
  arms: Map<string, DefinitionArm>;
}

export const NO_ARM: DefinitionArm = { users: 0, withEvents: 0, capped: 0, sum: 0, sumSquares: 0 };

/** Per-user values as columns (`width` of them: a definition's aggregates), from rows or as they are. */
export function columnsOf(v: VariantUserValues | VariantUserColumns, width: number): VariantUserColumns {
  if ('columns' in v) return v;
  const columns = Array.from({ length: width }, () => new Float64Array(v.rows.length));
  v.rows.forEach((row, k) => {
    for (let i = 0; i < width; i += 1) columns[i][k] = row[i];
  });
  return { variantId: v.variantId, users: v.users, columns };
}

/** The users with an event among per-user values (rows or columns); 0 for none. */
export const rowCount = (v: VariantUserValues | VariantUserColumns | undefined): number =>
  v === undefined ? 0 : 'columns' in v ? (v.columns[0]?.length ?? 0) : v.rows.length;

const EMPTY = new Float64Array(0);

const allFinite = (xs: ArrayLike<number>) => {
  for (let k = 0; k < xs.length; k += 1) if (!Number.isFinite(xs[k])) return false;
  return true;
};

/**
 * capGroups' cap over every group's values padded with `zeros` zeros in all: null for none, for a percentile of no
 * values, or for invalid input (a non-finite value or cap, p outside (0, 1)), which capGroups leaves uncapped.
 */
function pooledCap(groups: readonly Float64Array[], zeros: number, capping: Capping): number | null {
  if (capping.type === 'none' || !groups.every(allFinite)) return null;
  if (capping.type === 'absolute') return Number.isFinite(capping.value) ? capping.value : null;
  if (!isOpenUnit(capping.p)) return null;
  const values = new Float64Array(groups.reduce((n, g) => n + g.length, 0));
  let at = 0;
  for (const g of groups) {
    values.set(g, at);
    at += g.length;
  }
  values.sort();
  const n = values.length + zeros;
  if (n === 0) return null;
  let negative = 0;
  while (negative < values.length && values[negative] < 0) negative += 1;
  // The pooled order statistics: the negative values, the padded zeros, then the rest.
  const orderStatistic = (i: number) => (i < negative ? values[i] : i < negative + zeros ? 0 : values[i - zeros]);
  return quantileOfOrdered(n, orderStatistic, capping.p);
}

/** One group's capped values: sum, sum of squares, users above the cap (its `pad` zeros after its values). */
function cappedSums(x: Float64Array, pad: number, cap: number | null): { sum: number; sumSquares: number; capped: number } {
  let sum = 0;
  let sumSquares = 0;
  let capped = 0;
  for (let k = 0; k < x.length; k += 1) {
    let v = x[k];
    if (cap !== null && v > cap) {
      v = cap;
      capped += 1;
    }
    sum += v;
    sumSquares += v * v;
  }
  if (cap !== null && cap < 0) {
    // Zeros above a negative cap are capped too (added one by one, as summing the padded array does).
    for (let k = 0; k < pad; k += 1) {
      sum += cap;
      sumSquares += cap * cap;
    }
    capped += pad;
  }
  return { sum, sumSquares, capped };
}

const positives = (x: Float64Array) => {
  let n = 0;
  for (let k = 0; k < x.length; k += 1) if (x[k] > 0) n += 1;
  return n;
};

/**
 * The per-user values' statistics: proportion and mean capped (pooled percentile over every analysed user's value,
 * zeros included), ratio with its numerator capped, quantile summarised over the users with events.
 */
export function definitionStatsFromColumns(
  d: DefinitionSettings, variants: readonly Variant[], values: readonly VariantUserColumns[], confidenceLevel: number,
): DefinitionStats {
  const data = new Map(values.map((v) => [v.variantId, v]));
  const column = (id: string, i: number) => data.get(id)?.columns[i] ?? EMPTY;
  const users = (id: string) => data.get(id)?.users ?? 0;
  if (d.kind === 'quantile') {
    return {
      cap: null,
      arms: new Map(variants.map((v) => {
        const x = column(v.id, 0);
        const valid = x.length > 0 && allFinite(x) && isOpenUnit(d.quantile!) && isOpenUnit(confidenceLevel);
        const quantile = valid ? quantileSummaryOfSorted(x.slice().sort(), d.quantile!, confidenceLevel) : null;
        return [v.id, { ...NO_ARM, users: users(v.id), withEvents: x.length, quantile }];
      })),
    };
  }
  // Mean and ratio pad with zeros up to the analysed users; a proportion reads the users with events only.
  const padded = d.kind !== 'proportion';
  const xs = variants.map((v) => column(v.id, 0));
  const pads = variants.map((v, i) => (padded ? Math.max(0, users(v.id) - xs[i].length) : 0));
  const cap = pooledCap(xs, pads.reduce((a, b) => a + b, 0), d.kind === 'proportion' ? { type: 'none' } : d.capping);
  if (d.kind === 'ratio') {
    return {
      cap,
      arms: new Map(variants.map((v, i) => {
        const x = xs[i];
        const y = column(v.id, 1);
        const s = cappedSums(x, pads[i], cap);
        let sumY = 0;
        let sumY2 = 0;
        let sumXY = 0;
        for (let k = 0; k < x.length; k += 1) {
          const capped = cap !== null && x[k] > cap ? cap : x[k];
          sumY += y[k];
          sumY2 += y[k] * y[k];
          sumXY += capped * y[k];
        }
        const n = x.length + pads[i];
        return [v.id, {
          ...NO_ARM, users: n, withEvents: positives(x), capped: s.capped,
          ratio: { n, sum_x: s.sum, sum_y: sumY, sum_x2: s.sumSquares, sum_y2: sumY2, sum_xy: sumXY },
        }];
      })),
    };
  }
  return {
    cap,
    arms: new Map(variants.map((v, i) => {
      const s = cappedSums(xs[i], pads[i], cap);
      return [v.id, { users: users(v.id), withEvents: positives(xs[i]), capped: s.capped, sum: s.sum, sumSquares: s.sumSquares }];
    })),
  };
}
