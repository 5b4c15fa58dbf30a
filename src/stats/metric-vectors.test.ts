/**
 * numpy/SciPy reference vectors for ratio, capping and quantile metrics (test/vectors/metric-stats.json, generated
 * by scripts/reference/metrics.py): every case of every key, relative 1e-9.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { capGroups, type Capping } from './capping.js';
import { compareQuantiles, quantileRanks, quantileSummary } from './quantile.js';
import { compareRatios, type RatioStats } from './ratio.js';

type Case = Record<string, any>;
const fixture = JSON.parse(readFileSync(new URL('../../test/vectors/metric-stats.json', import.meta.url), 'utf8')) as {
  cases: Record<string, Case[]>;
};

function close(actual: number | null | undefined, expected: number): void {
  expect(typeof actual).toBe('number');
  const a = actual as number;
  if (expected === 0) expect(Math.abs(a)).toBeLessThanOrEqual(1e-12);
  else expect(Math.abs(a - expected) / Math.abs(expected)).toBeLessThanOrEqual(1e-9);
}

const sum = (values: number[]) => values.reduce((s, v) => s + v, 0);

const runners: Record<string, (c: Case) => void> = {
  ratio_delta_method: (c) => {
    const r = compareRatios(c.control as RatioStats, c.treatment as RatioStats, c.confidence_level);
    const e = c.expected;
    expect(r.reason).toBeNull();
    close(r.control!.ratio, e.control_ratio);
    close(r.control!.variance, e.control_variance);
    close(r.treatment!.ratio, e.treatment_ratio);
    close(r.treatment!.variance, e.treatment_variance);
    for (const k of ['difference', 'std_error', 't', 'df', 'p_value', 'ci_lower', 'ci_upper', 'relative_lift', 'relative_std_error', 'relative_ci_lower', 'relative_ci_upper'] as const) {
      close(r[k], e[k]);
    }
  },
  ratio_denominator_one_is_welch: (c) => {
    const r = compareRatios(c.control as RatioStats, c.treatment as RatioStats, c.confidence_level);
    for (const k of ['difference', 't', 'df', 'p_value', 'ci_lower', 'ci_upper'] as const) close(r[k], c.expected[k]);
  },
  capping: (c) => {
    const r = capGroups(c.groups, c.capping as Capping);
    expect(r).not.toBeNull();
    close(r!.cap, c.expected.cap);
    expect(r!.groups.map((g) => g.capped_count)).toEqual(c.expected.capped_counts);
    expect(r!.capped_count).toBe(sum(c.expected.capped_counts));
    r!.groups.forEach((g, i) => {
      close(sum(g.values), c.expected.capped_sums[i]);
      close(sum(g.values.map((v) => v * v)), c.expected.capped_sums_of_squares[i]);
      expect(g.values.length).toBe(c.groups[i].length);
    });
  },
  quantile_difference: (c) => {
    const e = c.expected;
    const sc = quantileSummary(c.control_values, c.p, c.confidence_level)!;
    const st = quantileSummary(c.treatment_values, c.p, c.confidence_level)!;
    for (const [s, values, want] of [[sc, c.control_values, e.control], [st, c.treatment_values, e.treatment]] as const) {
      expect(quantileRanks(values.length, c.p, c.confidence_level)).toEqual({ lower: want.lower_rank, upper: want.upper_rank });
      expect(s.n).toBe(want.n);
      close(s.quantile, want.quantile);
      expect(s.lower).toBe(want.lower);
      expect(s.upper).toBe(want.upper);
    }
    const r = compareQuantiles(sc, st, c.p, c.confidence_level);
    expect(r.reason).toBeNull();
    close(r.control!.std_error, e.control.std_error);
    close(r.treatment!.std_error, e.treatment.std_error);
    for (const k of ['difference', 'std_error', 'z', 'p_value', 'ci_lower', 'ci_upper', 'relative_difference', 'relative_std_error', 'relative_ci_lower', 'relative_ci_upper'] as const) {
      close(r[k], e[k]);
    }
  },
};

describe('metric reference vectors (numpy/SciPy)', () => {
  it('has a runner for every key', () => {
    expect(Object.keys(fixture.cases).sort()).toEqual(Object.keys(runners).sort());
  });
  for (const [key, list] of Object.entries(fixture.cases)) {
    list.forEach((c, i) => it(`${key} #${i} ${c.name ?? ''}`, () => runners[key](c)));
  }
});
