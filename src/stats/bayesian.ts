/**
 * Beta-Binomial (conjugate) analysis of two conversion rates.
 *
 * Posterior of each arm: Beta(a0 + conversions, b0 + n - conversions), prior Beta(a0, b0)
 * (default [1, 1], uniform). C = control rate, T = treatment rate, independent posteriors.
 *
 * P(T > C)
 *   Exact closed form when one of the four posterior parameters is an integer m (Evan Miller,
 *   "Formulas for Bayesian A/B testing"): for X1 ~ Beta(a1,b1), X2 ~ Beta(a2,b2), a2 integer,
 *     P(X2 > X1) = sum_{i=0}^{a2-1} B(a1+i, b1+b2) / ((b2+i) B(1+i, b2) B(a1, b1)),
 *   evaluated with the term ratio t_{i+1}/t_i = (a1+i)(b2+i) / ((a1+b1+b2+i)(i+1)) in scaled
 *   arithmetic. The symmetric forms (swap arms, or use 1-X ~ Beta(b, a)) let us sum over the
 *   smallest integer parameter. Used when that parameter is <= EXACT_TERM_LIMIT.
 *   Otherwise: P(T - C <= c) = integral f_T(y) P(C >= y - c) dy (or the mirror form over C),
 *   integrating over the density of the arm with the smaller posterior standard deviation so
 *   that the other factor is smooth on the integration scale, by deterministic adaptive
 *   Gauss–Kronrod quadrature (absolute error target 1e-10).
 *
 * Expected loss (the expected shortfall of the chosen arm), exact identity
 *   E[max(C - T, 0)] = E[C] P(C' > T) - E[T] P(C > T'),   C' ~ Beta(aC+1, bC), T' ~ Beta(aT+1, bT)
 * (because x f_{a,b}(x) = a/(a+b) f_{a+1,b}(x)), so it reuses the P(X > Y) machinery; clamped at 0.
 *
 * ROPE probability P(|T - C| <= rope) by the same quadrature, with the difference of CDFs
 * taken inside the integrand (no cancellation).
 *
 * Credible interval of an arm: equal-tailed beta quantiles.
 *
 * Invalid input (negative or non-finite counts, conversions > n, prior parameters <= 0,
 * posterior parameters above 1e13) gives null; nothing here throws or returns NaN.
 *
 * Large experiments: the beta CDF / quantile used here switch to a TOMS 708 continued
 * fraction for parameters above 1e4 (see distributions.ts), because stdlib's incomplete beta
 * degrades badly beyond ~1e7; results stay accurate to ~1e-10 up to 1e12.
 */
import { betaCdf, betaPdf, betaQuantile, betaSf, logBeta } from './distributions.js';
import { integrate } from './quadrature.js';

export interface BetaParams {
  alpha: number;
  beta: number;
}

export interface ArmCounts {
  conversions: number;
  n: number;
}

/** Above this many terms the closed form is replaced by quadrature. */
const EXACT_TERM_LIMIT = 100_000;

/**
 * Absolute error target of the quadrature. For very large parameters the integrands carry
 * ~1e-12 rounding noise (incomplete beta, spacing of doubles near the mean), so much tighter
 * targets cannot be certified and would only burn the subdivision budget.
 */
const QUADRATURE_ABS_TOL = 1e-10;

export const DEFAULT_PRIOR: readonly [number, number] = [1, 1];

/**
 * Largest posterior parameter accepted (1e13 counts): beyond it the numerics are untested
 * and the continued fractions get slow; such input gives null.
 */
const MAX_PARAMETER = 1e13;

function validParams(p: BetaParams): boolean {
  return p.alpha > 0 && p.beta > 0 && p.alpha <= MAX_PARAMETER && p.beta <= MAX_PARAMETER;
}

/** Posterior Beta parameters, or null for invalid counts / prior. */
export function posterior(arm: ArmCounts, prior: readonly [number, number] = DEFAULT_PRIOR): BetaParams | null {
  const { conversions, n } = arm;
  if (!Number.isFinite(conversions) || !Number.isFinite(n) || conversions < 0 || n < 0 || conversions > n) return null;
  if (!validParams({ alpha: prior[0], beta: prior[1] })) return null;
  const p = { alpha: prior[0] + conversions, beta: prior[1] + n - conversions };
  return validParams(p) ? p : null;
}

const mean = (p: BetaParams): number => p.alpha / (p.alpha + p.beta);
const variance = (p: BetaParams): number => {
  const s = p.alpha + p.beta;
  return (p.alpha * p.beta) / (s * s * (s + 1));
};

/** sum_{i=0}^{a2-1} of the Evan Miller terms = P(X2 > X1); a2 must be a positive integer. */
function exactGreater(a1: number, b1: number, a2: number, b2: number): number {
  const logT0 = logBeta(a1, b1 + b2) - logBeta(a1, b1);
  let term = 1;
  let sum = 1;
  let logOffset = 0;
  for (let i = 0; i < a2 - 1; i++) {
    term *= ((a1 + i) * (b2 + i)) / ((a1 + b1 + b2 + i) * (i + 1));
    sum += term;
    if (sum > 1e250) {
      term *= 1e-250;
      sum *= 1e-250;
      logOffset += 250 * Math.LN10;
    }
  }
  const v = Math.exp(logT0 + logOffset + Math.log(sum));
  return Math.min(1, Math.max(0, v));
}

/** Breakpoints covering the bulk of a beta law: mean ± k sd, clipped into [0, 1]. */
function breakpoints(p: BetaParams): number[] {
  const m = mean(p);
  const sd = Math.sqrt(variance(p));
  const ks = [-40, -20, -10, -6, -3, -1.5, 0, 1.5, 3, 6, 10, 20, 40];
  const pts = new Set<number>([0, 1]);
  for (const k of ks) {
    const x = m + k * sd;
    if (x > 0 && x < 1) pts.add(x);
  }
  // Log-concave laws (both parameters >= 1) have negligible mass beyond 40 sd: trim the range.
  let list = [...pts].sort((a, b) => a - b);
  if (p.alpha >= 1 && p.beta >= 1) {
    const lo = Math.max(0, m - 40 * sd);
    const hi = Math.min(1, m + 40 * sd);
    list = list.filter((x) => x >= lo && x <= hi);
    if (list[0] !== lo) list.unshift(lo);
    if (list[list.length - 1] !== hi) list.push(hi);
  }
  return list;
}

function integrateOver(p: BetaParams, g: (x: number) => number): number {
  const f = (x: number): number => {
    const d = betaPdf(x, p.alpha, p.beta);
    if (!(d > 0) || !Number.isFinite(d)) return 0;
    return d * g(x);
  };
  return integrate(f, breakpoints(p), QUADRATURE_ABS_TOL).value;
}

/** P(T - C <= c) by quadrature over the tighter posterior. */
function differenceCdfQuadrature(c: BetaParams, t: BetaParams, shift: number): number {
  let v: number;
  if (variance(t) <= variance(c)) {
    // integral f_T(y) P(C >= y - shift) dy
    v = integrateOver(t, (y) => betaSf(y - shift, c.alpha, c.beta));
  } else {
    // integral f_C(x) P(T <= x + shift) dx
    v = integrateOver(c, (x) => betaCdf(x + shift, t.alpha, t.beta));
  }
  return Math.min(1, Math.max(0, v));
}

/** P(B > A) for independent A ~ Beta(a), B ~ Beta(b). */
export function probabilityGreater(a: BetaParams, b: BetaParams): number | null {
  if (!validParams(a) || !validParams(b)) return null;
  type Option = { terms: number; run: () => number };
  const options: Option[] = [];
  const isInt = (v: number): boolean => Number.isInteger(v) && v <= EXACT_TERM_LIMIT;
  if (isInt(b.alpha)) options.push({ terms: b.alpha, run: () => exactGreater(a.alpha, a.beta, b.alpha, b.beta) });
  if (isInt(a.alpha)) options.push({ terms: a.alpha, run: () => 1 - exactGreater(b.alpha, b.beta, a.alpha, a.beta) });
  // 1 - A ~ Beta(a.beta, a.alpha); B > A  <=>  1 - A > 1 - B
  if (isInt(a.beta)) options.push({ terms: a.beta, run: () => exactGreater(b.beta, b.alpha, a.beta, a.alpha) });
  if (isInt(b.beta)) options.push({ terms: b.beta, run: () => 1 - exactGreater(a.beta, a.alpha, b.beta, b.alpha) });
  let v: number;
  if (options.length > 0) {
    options.sort((x, y) => x.terms - y.terms);
    v = options[0].run();
  } else {
    v = 1 - differenceCdfQuadrature(a, b, 0);
  }
  return Math.min(1, Math.max(0, v));
}

/**
 * Expected loss of choosing `chosen` over `other`: E[max(other - chosen, 0)], in rate units.
 */
export function expectedLoss(chosen: BetaParams, other: BetaParams): number | null {
  if (!validParams(chosen) || !validParams(other)) return null;
  const otherPlus = { alpha: other.alpha + 1, beta: other.beta };
  const chosenPlus = { alpha: chosen.alpha + 1, beta: chosen.beta };
  const p1 = probabilityGreater(chosen, otherPlus); // P(other' > chosen)
  const p2 = probabilityGreater(chosenPlus, other); // P(other > chosen')
  if (p1 === null || p2 === null) return null;
  const loss = mean(other) * p1 - mean(chosen) * p2;
  return Math.max(0, loss);
}

/** P(|T - C| <= rope) (rope >= 0, in rate units). */
export function ropeProbability(control: BetaParams, treatment: BetaParams, rope: number): number | null {
  if (!validParams(control) || !validParams(treatment) || !Number.isFinite(rope) || rope < 0) return null;
  if (rope === 0) return 0;
  if (rope >= 1) return 1;
  const c = control;
  const t = treatment;
  let v: number;
  // Difference of CDFs over an interval, using whichever tail keeps it accurate.
  const mass = (lo: number, hi: number, p: BetaParams): number => {
    const m = mean(p);
    return lo >= m ? betaSf(lo, p.alpha, p.beta) - betaSf(hi, p.alpha, p.beta) : betaCdf(hi, p.alpha, p.beta) - betaCdf(lo, p.alpha, p.beta);
  };
  if (variance(t) <= variance(c)) {
    // P(y - rope <= C <= y + rope) averaged over T
    v = integrateOver(t, (y) => mass(y - rope, y + rope, c));
  } else {
    v = integrateOver(c, (x) => mass(x - rope, x + rope, t));
  }
  return Math.min(1, Math.max(0, v));
}

/** Equal-tailed credible interval [Q((1-level)/2), Q((1+level)/2)]; null for invalid input. */
export function credibleInterval(p: BetaParams, level = 0.95): [number, number] | null {
  if (!validParams(p) || !Number.isFinite(level) || level <= 0 || level >= 1) return null;
  const lo = betaQuantile((1 - level) / 2, p.alpha, p.beta);
  const hi = betaQuantile((1 + level) / 2, p.alpha, p.beta);
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return null;
  return [lo, hi];
}

export type BayesianDecision = 'STOP_WINNER' | 'STOP_EQUIVALENT' | 'STOP_FUTILE' | 'CONTINUE';

export interface DecisionInput {
  /** P(treatment > control) */
  probabilityToBeat: number;
  /** expected loss of choosing the treatment, E[max(C - T, 0)] */
  expectedLoss: number;
  /** P(|T - C| <= rope); null when no ROPE is configured */
  ropeProbability: number | null;
  /** largest acceptable expected loss (rate units), e.g. 0.0005 */
  lossThreshold: number;
  /** credible level in (0, 1), e.g. 0.95 */
  credibleLevel: number;
}

/**
 * Decision rule (first match wins):
 *   1. STOP_WINNER     probabilityToBeat >= credibleLevel and expectedLoss <= lossThreshold
 *   2. STOP_EQUIVALENT ropeProbability >= credibleLevel (difference practically zero)
 *   3. STOP_FUTILE     probabilityToBeat <= 1 - credibleLevel (treatment very likely worse)
 *   4. CONTINUE        otherwise, and whenever an input is not a finite number in range
 * A winner takes precedence over equivalence: when both hold, shipping the treatment is
 * safe (its expected loss is below the threshold).
 */
export function bayesianDecision(input: DecisionInput): BayesianDecision {
  const { probabilityToBeat: p, expectedLoss: loss, ropeProbability: rope, lossThreshold, credibleLevel } = input;
  if (![p, loss, lossThreshold, credibleLevel].every(Number.isFinite)) return 'CONTINUE';
  if (!(credibleLevel > 0 && credibleLevel < 1) || lossThreshold < 0) return 'CONTINUE';
  if (p >= credibleLevel && loss <= lossThreshold) return 'STOP_WINNER';
  if (rope !== null && Number.isFinite(rope) && rope >= credibleLevel) return 'STOP_EQUIVALENT';
  if (p <= 1 - credibleLevel) return 'STOP_FUTILE';
  return 'CONTINUE';
}

export interface ArmPosteriorSummary {
  alpha: number;
  beta: number;
  mean: number;
  credible_interval: [number, number];
}

export interface BetaBinomialResult {
  control: ArmPosteriorSummary;
  treatment: ArmPosteriorSummary;
  prob_treatment_beats_control: number;
  /** E[max(C - T, 0)] */
  expected_loss_treatment: number;
  /** E[max(T - C, 0)] */
  expected_loss_control: number;
  /** null when rope is not given */
  rope_probability: number | null;
  credible_level: number;
}

export interface BetaBinomialOptions {
  prior?: readonly [number, number];
  credibleLevel?: number;
  /** half-width of the region of practical equivalence, in rate units */
  rope?: number | null;
}

/** All posterior quantities for control vs treatment; null on invalid input. */
export function betaBinomialAnalysis(
  control: ArmCounts,
  treatment: ArmCounts,
  options: BetaBinomialOptions = {},
): BetaBinomialResult | null {
  const prior = options.prior ?? DEFAULT_PRIOR;
  const level = options.credibleLevel ?? 0.95;
  const c = posterior(control, prior);
  const t = posterior(treatment, prior);
  if (!c || !t) return null;
  const ciC = credibleInterval(c, level);
  const ciT = credibleInterval(t, level);
  const prob = probabilityGreater(c, t);
  const lossT = expectedLoss(t, c);
  const lossC = expectedLoss(c, t);
  if (!ciC || !ciT || prob === null || lossT === null || lossC === null) return null;
  const rope = options.rope ?? null;
  const ropeP = rope === null ? null : ropeProbability(c, t, rope);
  return {
    control: { alpha: c.alpha, beta: c.beta, mean: mean(c), credible_interval: ciC },
    treatment: { alpha: t.alpha, beta: t.beta, mean: mean(t), credible_interval: ciT },
    prob_treatment_beats_control: prob,
    expected_loss_treatment: lossT,
    expected_loss_control: lossC,
    rope_probability: ropeP,
    credible_level: level,
  };
}

/** P(T > C) from counts with a Beta prior (default uniform); null on invalid input. */
export function probabilityTreatmentBeatsControl(
  control: ArmCounts,
  treatment: ArmCounts,
  prior: readonly [number, number] = DEFAULT_PRIOR,
): number | null {
  const c = posterior(control, prior);
  const t = posterior(treatment, prior);
  if (!c || !t) return null;
  return probabilityGreater(c, t);
}

/** Exposed for tests: P(B > A) forced through quadrature (no closed form). */
export function probabilityGreaterByQuadrature(a: BetaParams, b: BetaParams): number | null {
  if (!validParams(a) || !validParams(b)) return null;
  return Math.min(1, Math.max(0, 1 - differenceCdfQuadrature(a, b, 0)));
}
