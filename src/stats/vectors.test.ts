/**
 * SciPy reference vectors (test/fixtures/stats-vectors.json): every case of every key.
 * Tolerance: relative 1e-9 unless the case gives tolerance_abs.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chiSquareSf, normalCdf, normalQuantile, studentTTwoSidedP } from './distributions.js';
import { fisherExactTwoSided } from './fisher.js';
import { welchTTest, summaryFromSd } from './welch.js';
import { benjaminiHochberg, bonferroni, holm, adjust } from './corrections.js';
import { srmChiSquare } from './srm.js';
import { sampleSizeTwoProportions } from './power.js';
import { probabilityTreatmentBeatsControl } from './bayesian.js';
import { msprtTwoProportions } from './sequential.js';

type Case = Record<string, any>;
const fixture = JSON.parse(
  readFileSync(new URL('../../test/fixtures/stats-vectors.json', import.meta.url), 'utf8'),
) as { cases: Record<string, Case[]> };
const cases = fixture.cases;

const KNOWN_KEYS = [
  'normal_cdf',
  'normal_quantile',
  'student_t_two_sided_p',
  'chi_square_sf',
  'srm_chi_square',
  'multiple_testing',
  'fisher_exact_two_sided',
  'welch_t_from_stats',
  'sample_size_two_proportions_pooled',
  'beta_binomial_prob_treatment_beats_control',
  'msprt_normal_mixture_two_proportions',
];

function close(actual: number | null | undefined, expected: number, c: Case = {}): void {
  expect(actual).not.toBeNull();
  expect(actual).not.toBeUndefined();
  const a = actual as number;
  expect(Number.isFinite(a)).toBe(true);
  if (typeof c.tolerance_abs === 'number') {
    expect(Math.abs(a - expected)).toBeLessThanOrEqual(c.tolerance_abs);
    return;
  }
  const rel = typeof c.tolerance_rel === 'number' ? c.tolerance_rel : 1e-9;
  if (expected === 0) expect(Math.abs(a)).toBeLessThanOrEqual(1e-300);
  else expect(Math.abs(a - expected) / Math.abs(expected)).toBeLessThanOrEqual(rel);
}

function closeArray(actual: number[], expected: number[], c: Case): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((v, i) => close(v, expected[i], c));
}

const runners: Record<string, (c: Case) => void> = {
  normal_cdf: (c) => close(normalCdf(c.x), c.p, c),
  normal_quantile: (c) => close(normalQuantile(c.p), c.x, c),
  student_t_two_sided_p: (c) => close(studentTTwoSidedP(c.t, c.df), c.p, c),
  chi_square_sf: (c) => close(chiSquareSf(c.x, c.df), c.p, c),
  srm_chi_square: (c) => {
    const r = srmChiSquare(c.observed, c.allocation_percent);
    expect(r).not.toBeNull();
    close(r!.statistic, c.statistic, c);
    close(r!.p_value, c.p_value, c);
    expect(r!.df).toBe(c.observed.length - 1);
  },
  multiple_testing: (c) => {
    closeArray(bonferroni(c.p), c.bonferroni, c);
    closeArray(holm(c.p), c.holm, c);
    closeArray(benjaminiHochberg(c.p), c.benjamini_hochberg, c);
    closeArray(adjust(c.p, 'benjamini_hochberg'), c.benjamini_hochberg, c);
    closeArray(adjust(c.p, 'none'), c.p, c);
  },
  fisher_exact_two_sided: (c) => {
    const [[cc, cnc], [tc, tnc]] = c.table as number[][];
    close(fisherExactTwoSided(cc, cc + cnc, tc, tc + tnc), c.p_value, c);
  },
  welch_t_from_stats: (c) => {
    const r = welchTTest(
      summaryFromSd(c.control.n, c.control.mean, c.control.sd),
      summaryFromSd(c.treatment.n, c.treatment.mean, c.treatment.sd),
    );
    close(r.t, c.t, c);
    close(r.df, c.df, c);
    close(r.p_value, c.p_value, c);
  },
  sample_size_two_proportions_pooled: (c) => {
    const r = sampleSizeTwoProportions(c.p1, c.p2, c.alpha, c.power);
    expect(r.reason).toBeNull();
    close(r.value?.n_per_variant_unrounded, c.n_per_variant_unrounded, c);
    expect(r.value?.n_per_variant).toBe(Math.ceil(c.n_per_variant_unrounded));
  },
  beta_binomial_prob_treatment_beats_control: (c) => {
    const p = probabilityTreatmentBeatsControl(
      { conversions: c.control[0], n: c.control[1] },
      { conversions: c.treatment[0], n: c.treatment[1] },
      c.prior,
    );
    close(p, c.probability, c);
  },
  msprt_normal_mixture_two_proportions: (c) => {
    const r = msprtTwoProportions({
      controlRate: c.control_rate,
      controlN: c.control_n,
      treatmentRate: c.treatment_rate,
      treatmentN: c.treatment_n,
      tauSquared: c.tau_squared,
    });
    close(r.likelihood_ratio, c.likelihood_ratio, c);
    close(r.always_valid_p, c.always_valid_p, c);
  },
};

describe('SciPy reference vectors', () => {
  it('has a runner for every key in the fixture', () => {
    const missing = Object.keys(cases).filter((k) => !(k in runners));
    expect(missing).toEqual([]);
    for (const k of KNOWN_KEYS) expect(cases[k]?.length ?? 0).toBeGreaterThan(0);
  });

  for (const [key, list] of Object.entries(cases)) {
    describe(key, () => {
      list.forEach((c, i) => {
        it(`case ${i}`, () => {
          const run = runners[key];
          expect(run, `no runner for ${key}`).toBeDefined();
          run(c);
        });
      });
    });
  }
});
