/**
 * SRM diagnosis (docs/statistics.md, "Sequential SRM test" and "SRM per dimension"): the always-valid sequential test
 * over the daily looks of the assignments, and the chi-square check within each value of each assignment-context
 * attribute, Bonferroni-adjusted over every value tested, with the worst contributors named.
 */
import { bonferroni, sequentialSrm, srmChiSquare, SRM_P_THRESHOLD, SRM_PRIOR_CONCENTRATION } from '../stats/index.js';
import type { ExperimentSettings } from './types.js';
import { finite } from './compare.js';
import type { SrmDiagnosis, SrmSequential } from './model.js';
import type { ContextCount } from './types.js';
import type { Snapshot } from './snapshot.js';

/** Contributors named in srm.diagnosis.worst. */
export const WORST_CONTRIBUTORS = 5;
/** A value is tested when every variant with traffic expects at least this many users (the chi-square rule of thumb). */
export const MIN_EXPECTED_PER_VARIANT = 5;

/** Cumulative assigned users per variant (experiment order) at the end of each UTC day with assignments. */
export function dailyLooks(e: ExperimentSettings, assignments: Snapshot['assignments']): number[][] {
  const index = new Map(e.variants.map((v, i) => [v.id, i]));
  const byDay = new Map<string, number[]>();
  for (const a of assignments) {
    const i = index.get(a.variantId);
    if (i === undefined) continue;
    let row = byDay.get(a.day);
    if (!row) byDay.set(a.day, (row = e.variants.map(() => 0)));
    row[i] += a.users;
  }
  const looks: number[][] = [];
  let running = e.variants.map(() => 0);
  for (const day of [...byDay.keys()].sort()) {
    running = running.map((x, i) => x + byDay.get(day)![i]);
    looks.push(running);
  }
  return looks;
}

/** The sequential test over the daily looks; null where the chi-square check is null (bandits, nothing to test). */
export function sequentialSrmBlock(e: ExperimentSettings, assignments: Snapshot['assignments']): SrmSequential | null {
  if (e.experiment_type === 'bandit') return null;
  const result = sequentialSrm(dailyLooks(e, assignments), e.variants.map((v) => v.traffic_allocation));
  if (!result) return null;
  return {
    method: 'dirichlet_multinomial_mixture',
    p_value: result.p_value,
    log_bayes_factor: result.log_bayes_factor,
    looks: result.looks,
    prior_concentration: SRM_PRIOR_CONCENTRATION,
    threshold: result.threshold,
    warning: result.srm,
  };
}

/** Chi-square within each value of each attribute; the worst values first. */
export function srmDiagnosis(e: ExperimentSettings, counts: ContextCount[], overLimit: string[], valueLimit: number): SrmDiagnosis | null {
  if (e.experiment_type === 'bandit' || e.variants.length < 2) return null;
  const index = new Map(e.variants.map((v, i) => [v.id, i]));
  const allocations = e.variants.map((v) => v.traffic_allocation);
  // The rollup drops an attribute once it passes the limit; values read since the last rollup are held to it too.
  const values = new Map<string, Set<string>>();
  for (const c of counts) {
    let seen = values.get(c.attribute);
    if (!seen) values.set(c.attribute, (seen = new Set()));
    seen.add(c.value);
  }
  const over = new Set([...overLimit, ...[...values].filter(([, seen]) => seen.size > valueLimit).map(([attribute]) => attribute)]);
  const cells = new Map<string, { attribute: string; value: string; observed: number[] }>();
  for (const c of counts) {
    if (over.has(c.attribute)) continue;
    const i = index.get(c.variantId);
    if (i === undefined) continue;
    const key = JSON.stringify([c.attribute, c.value]);
    let cell = cells.get(key);
    if (!cell) cells.set(key, (cell = { attribute: c.attribute, value: c.value, observed: e.variants.map(() => 0) }));
    cell.observed[i] += c.users;
  }
  const tested = [...cells.values()].flatMap((cell) => {
    const result = srmChiSquare(cell.observed, allocations);
    if (!result) return [];
    const enough = result.expected.every((x, i) => allocations[i] === 0 || x >= MIN_EXPECTED_PER_VARIANT);
    return enough ? [{ ...cell, result }] : [];
  });
  const adjusted = bonferroni(tested.map((t) => t.result.p_value));
  const rows = tested.map((t, k) => ({
    attribute: t.attribute,
    value: t.value,
    users: t.observed.reduce((a, b) => a + b, 0),
    statistic: finite(t.result.statistic ?? Infinity),
    p_value: t.result.p_value,
    adjusted_p_value: adjusted[k],
    warning: adjusted[k] < SRM_P_THRESHOLD,
    variants: e.variants.map((v, i) => ({ variant_id: v.id, observed: t.observed[i], expected: t.result.expected[i] })),
  }));
  const order = (a: (typeof rows)[number], b: (typeof rows)[number]) =>
    a.p_value - b.p_value || (b.statistic ?? Infinity) - (a.statistic ?? Infinity) || b.users - a.users
    || (a.attribute < b.attribute ? -1 : a.attribute > b.attribute ? 1 : a.value < b.value ? -1 : a.value > b.value ? 1 : 0);
  rows.sort(order);
  const attributes = [...new Set(rows.map((r) => r.attribute))].sort();
  return {
    threshold: SRM_P_THRESHOLD,
    values_tested: rows.length,
    value_limit: valueLimit,
    attributes_over_limit: [...over].sort(),
    dimensions: attributes.map((attribute) => {
      const mine = rows.filter((r) => r.attribute === attribute);
      return {
        attribute,
        values_tested: mine.length,
        min_adjusted_p_value: Math.min(...mine.map((r) => r.adjusted_p_value)),
        warning: mine.some((r) => r.warning),
        worst_value: mine[0].value,
      };
    }),
    worst: rows.slice(0, WORST_CONTRIBUTORS),
  };
}
