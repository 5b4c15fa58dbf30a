/**
 * Distribution primitives (standard normal, Student t, chi-square, beta).
 *
 * These are mathematical primitives with the usual conventions of a math library:
 * - arguments outside the parameter domain (NaN, df <= 0, p outside [0, 1], ...) give NaN;
 * - the quantile of p = 0 / p = 1 is -Infinity / +Infinity.
 * The higher-level modules (tests, power, sequential, bayesian, ...) validate their inputs
 * before calling these, and never surface NaN or Infinity in their results.
 */
import normal from '@stdlib/stats-base-dists-normal';
import studentT from '@stdlib/stats-base-dists-t';
import beta from '@stdlib/stats-base-dists-beta';
import betainc from '@stdlib/math-base-special-betainc';
import betaln from '@stdlib/math-base-special-betaln';
import { logBinomialKernel, logDpoisRaw } from './saddlepoint.js';

// ---------------------------------------------------------------------------------------------
// Standard normal
// ---------------------------------------------------------------------------------------------

/** Standard normal CDF, Phi(x). */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  return normal.cdf(x, 0, 1);
}

/** Standard normal survival function, 1 - Phi(x), accurate in the upper tail. */
export function normalSf(x: number): number {
  return normalCdf(-x);
}

/** Standard normal density. */
export function normalPdf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  return normal.pdf(x, 0, 1);
}

/**
 * Standard normal quantile, Phi^-1(p): Wichura's algorithm AS 241 (PPND16, relative accuracy
 * about 1e-16), the same algorithm as R's qnorm. p = 0 -> -Infinity, p = 1 -> +Infinity.
 */
export function normalQuantile(p: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  const q = p - 0.5;
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    return (
      (q *
        (((((((r * 2509.0809287301226727 + 33430.575583588128105) * r + 67265.770927008700853) * r +
          45921.953931549871457) *
          r +
          13731.693765509461125) *
          r +
          1971.5909503065514427) *
          r +
          133.14166789178437745) *
          r +
          3.387132872796366608)) /
      (((((((r * 5226.495278852545925 + 28729.085735721942674) * r + 39307.89580009271061) * r +
        21213.794301586595867) *
        r +
        5394.1960214247511077) *
        r +
        687.1870074920579083) *
        r +
        42.313330701600911252) *
        r +
        1)
    );
  }
  let r = Math.sqrt(-Math.log(q < 0 ? p : 1 - p));
  let val: number;
  if (r <= 5) {
    r -= 1.6;
    val =
      (((((((r * 7.7454501427834140764e-4 + 0.0227238449892691845833) * r + 0.24178072517745061177) * r +
        1.27045825245236838258) *
        r +
        3.64784832476320460504) *
        r +
        5.7694972214606914055) *
        r +
        4.6303378461565452959) *
        r +
        1.42343711074968357734) /
      (((((((r * 1.05075007164441684324e-9 + 5.475938084995344946e-4) * r + 0.0151986665636164571966) * r +
        0.14810397642748007459) *
        r +
        0.68976733498510000455) *
        r +
        1.6763848301838038494) *
        r +
        2.05319162663775882187) *
        r +
        1);
  } else {
    r -= 5;
    val =
      (((((((r * 2.01033439929228813265e-7 + 2.71155556874348757815e-5) * r + 0.0012426609473880784386) * r +
        0.026532189526576123093) *
        r +
        0.29656057182850489123) *
        r +
        1.7848265399172913358) *
        r +
        5.4637849111641143699) *
        r +
        6.6579046435011037772) /
      (((((((r * 2.04426310338993978564e-15 + 1.4215117583164458887e-7) * r + 1.8463183175100546818e-5) * r +
        7.868691311456132591e-4) *
        r +
        0.0148753612908506148525) *
        r +
        0.13692988092273580531) *
        r +
        0.59983220655588793769) *
        r +
        1);
  }
  return q < 0 ? -val : val;
}

// ---------------------------------------------------------------------------------------------
// Student t
// ---------------------------------------------------------------------------------------------

/**
 * Two-sided p-value P(|T| >= |t|) for Student's t with `df` degrees of freedom (df may be
 * fractional, as in Welch's test; df = Infinity gives the normal limit).
 * Computed from the regularized incomplete beta function, always using the small argument
 * so that neither tail loses precision: P = I_{t^2/(df+t^2)}(1/2, df/2) upper
 *                                        = I_{df/(df+t^2)}(df/2, 1/2) lower.
 */
export function studentTTwoSidedP(t: number, df: number): number {
  if (Number.isNaN(t) || Number.isNaN(df) || df <= 0) return NaN;
  const at = Math.abs(t);
  if (at === 0) return 1;
  if (at === Infinity) return 0;
  if (df === Infinity) return 2 * normalCdf(-at);
  const t2 = at * at;
  if (t2 < df) {
    const x = t2 / (df + t2);
    return clamp01(betainc(x, 0.5, df / 2, true, true));
  }
  const x = df / (df + t2);
  return clamp01(betainc(x, df / 2, 0.5, true, false));
}

/** Student t quantile (df = Infinity gives the normal quantile). */
export function studentTQuantile(p: number, df: number): number {
  if (Number.isNaN(p) || Number.isNaN(df) || df <= 0 || p < 0 || p > 1) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (df === Infinity || df > 1e12) return normalQuantile(p);
  return studentT.quantile(p, df);
}

// ---------------------------------------------------------------------------------------------
// Chi-square (via the regularized upper incomplete gamma function)
// ---------------------------------------------------------------------------------------------

const GAMMA_EPS = 1e-16;
const GAMMA_MAX_ITER = 1_000_000;
const FPMIN = 1e-300;

/**
 * Regularized upper incomplete gamma Q(a, x) = Gamma(a, x) / Gamma(a), for a > 0, x >= 0.
 * Series for P when x < a + 1, Lentz continued fraction for Q otherwise (Numerical Recipes
 * 6.2), with the prefactor x^a e^-x / Gamma(a) evaluated by Loader's saddle-point form so that
 * it stays accurate for large a. Q is returned directly in the upper tail (no 1 - P
 * cancellation), so tiny p-values keep full relative precision.
 */
export function regularizedGammaQ(a: number, x: number): number {
  if (Number.isNaN(a) || Number.isNaN(x) || a <= 0 || x < 0) return NaN;
  if (x === 0) return 1;
  if (x === Infinity) return 0;
  if (a === Infinity) return 1;
  const logPrefactor = Math.log(a) + logDpoisRaw(a, x);
  if (x < a + 1) {
    let ap = a;
    let del = 1 / a;
    let sum = del;
    for (let i = 0; i < GAMMA_MAX_ITER; i++) {
      ap += 1;
      del *= x / ap;
      sum += del;
      if (Math.abs(del) < Math.abs(sum) * GAMMA_EPS) break;
    }
    const lower = sum * Math.exp(logPrefactor);
    return clamp01(1 - lower);
  }
  let b = x + 1 - a;
  let c = 1 / FPMIN;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < GAMMA_MAX_ITER; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < FPMIN) d = FPMIN;
    c = b + an / c;
    if (Math.abs(c) < FPMIN) c = FPMIN;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < GAMMA_EPS) break;
  }
  return clamp01(Math.exp(logPrefactor + Math.log(h)));
}

/** Chi-square survival function P(X >= x) with `df` degrees of freedom. */
export function chiSquareSf(x: number, df: number): number {
  if (Number.isNaN(x) || Number.isNaN(df) || df <= 0) return NaN;
  if (x <= 0) return 1;
  return regularizedGammaQ(df / 2, x / 2);
}

// ---------------------------------------------------------------------------------------------
// Beta
// ---------------------------------------------------------------------------------------------

/**
 * Regularized incomplete beta I_x(a, b) (upper = false) or 1 - I_x(a, b) (upper = true).
 *
 * stdlib's betainc (a port of Boost's ibeta) is used while max(a, b) <= 1e4 or min(a, b) <= 1.
 * Beyond that it loses accuracy quickly (about 1e-10 at 1e7, 1e-4 at 1e8, and returns values
 * above 1 at 1e11), which matters for posteriors of large experiments. There we use the
 * continued fraction of DiDonato & Morris (ACM TOMS 708, routine BFRAC, as in R's pbeta),
 * whose coefficients use lambda = a - (a+b)x computed without cancellation, expanded on the
 * side where lambda >= 0, and with the prefactor x^a (1-x)^b / B(a, b) taken from Loader's
 * saddle-point binomial kernel. Checked against 60-digit evaluations: absolute error below
 * 1e-12 for parameters up to 1e9 (O(sqrt(min(a, b))) iterations near the mean).
 */
export function regularizedBeta(x: number, a: number, b: number, upper = false): number {
  if (Number.isNaN(x) || !(a > 0) || !(b > 0)) return NaN;
  if (x <= 0) return upper ? 1 : 0;
  if (x >= 1) return upper ? 0 : 1;
  if (Math.max(a, b) <= LARGE_BETA_PARAMETER || Math.min(a, b) <= 1) {
    return clamp01(betainc(x, a, b, true, upper));
  }
  const y = 1 - x;
  const lambda = a > b ? (a + b) * y - b : a - (a + b) * x;
  if (lambda >= 0) {
    const lower = betaFraction(a, b, x, y, lambda);
    return clamp01(upper ? 1 - lower : lower);
  }
  // I_x(a, b) = 1 - I_y(b, a)
  const upperValue = betaFraction(b, a, y, x, -lambda);
  return clamp01(upper ? upperValue : 1 - upperValue);
}

const LARGE_BETA_PARAMETER = 1e4;
const BETA_FRACTION_MAX_ITER = 10_000_000;

/**
 * TOMS 708 BFRAC: I_x(a, b) for a, b > 1 by continued fraction, assuming
 * lambda = (a + b) y - b >= 0.
 */
function betaFraction(a: number, b: number, x: number, y: number, lambda: number): number {
  // x^a y^b / B(a, b) = kernel(a, b; x) * a b / (a + b)
  const logBrc = logBinomialKernel(a, b, x, y) + Math.log(a) + Math.log(b) - Math.log(a + b);
  const brc = Math.exp(logBrc);
  if (brc === 0) return 0;
  const c = lambda + 1;
  const c0 = b / a;
  const c1 = 1 / a + 1;
  const yp1 = y + 1;
  let n = 0;
  let p = 1;
  let s = a + 1;
  let an = 0;
  let bn = 1;
  let anp1 = 1;
  let bnp1 = c / c1;
  let r = c1 / c;
  while (n < BETA_FRACTION_MAX_ITER) {
    n += 1;
    let t = n / a;
    const w = n * (b - n) * x;
    let e = a / s;
    const alpha = p * (p + c0) * e * e * (w * x);
    e = (1 + t) / (c1 + t + t);
    const beta = n + w / s + e * (c + n * yp1);
    p = 1 + t;
    s += 2;
    t = alpha * an + beta * anp1;
    an = anp1;
    anp1 = t;
    t = alpha * bn + beta * bnp1;
    bn = bnp1;
    bnp1 = t;
    const r0 = r;
    r = anp1 / bnp1;
    if (Math.abs(r - r0) <= 1e-15 * r) break;
    an /= bnp1;
    bn /= bnp1;
    anp1 = r;
    bnp1 = 1;
  }
  return brc * r;
}

/** Beta(a, b) CDF (see regularizedBeta). */
export function betaCdf(x: number, a: number, b: number): number {
  return regularizedBeta(x, a, b, false);
}

/** Beta(a, b) survival function 1 - CDF, computed directly (accurate in the upper tail). */
export function betaSf(x: number, a: number, b: number): number {
  return regularizedBeta(x, a, b, true);
}

/**
 * Beta(a, b) quantile. stdlib's quantile in the regime where stdlib's incomplete beta is
 * accurate (see regularizedBeta); otherwise safeguarded Newton iterations on regularizedBeta
 * (bisection whenever a step leaves the bracket), starting from the normal approximation.
 */
export function betaQuantile(p: number, a: number, b: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1 || !(a > 0) || !(b > 0)) return NaN;
  if (p === 0) return 0;
  if (p === 1) return 1;
  if (Math.max(a, b) <= LARGE_BETA_PARAMETER || Math.min(a, b) <= 1) return beta.quantile(p, a, b);
  const upper = p > 0.5;
  const target = upper ? 1 - p : p;
  // g(x) = F(x) - p (lower) or p - F(x) = S(x) - (1 - p) (upper), increasing in x either way
  const g = (x: number): number => (upper ? target - regularizedBeta(x, a, b, true) : regularizedBeta(x, a, b) - target);
  const mean = a / (a + b);
  const sd = Math.sqrt((mean * (1 - mean)) / (a + b + 1));
  let lo = 0;
  let hi = 1;
  let x = Math.min(1 - 1e-300, Math.max(1e-300, mean + normalQuantile(p) * sd));
  for (let i = 0; i < 200; i++) {
    const gx = g(x);
    if (gx === 0) return x;
    if (gx < 0) lo = x;
    else hi = x;
    const density = betaPdf(x, a, b);
    let next = density > 0 && Number.isFinite(density) ? x - gx / density : NaN;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (Math.abs(next - x) <= 1e-15 * x || hi - lo <= 1e-15 * hi) return next;
    x = next;
  }
  return x;
}

/**
 * log density of Beta(a, b) at x. For a, b > 2 it uses Loader's saddle-point form (as R's
 * dbeta): log(a+b-1) + log dbinom(a-1; a+b-2, x), which stays accurate for parameters in the
 * billions where (a-1) log x + (b-1) log(1-x) - log B(a, b) loses most of its digits.
 */
export function betaLogPdf(x: number, a: number, b: number): number {
  if (Number.isNaN(x) || !(a > 0) || !(b > 0)) return NaN;
  if (x < 0 || x > 1) return -Infinity;
  if (a <= 2 || b <= 2) return beta.logpdf(x, a, b);
  return Math.log(a + b - 1) + logBinomialKernel(a - 1, b - 1, x, 1 - x);
}

/** Beta(a, b) density at x (see betaLogPdf). */
export function betaPdf(x: number, a: number, b: number): number {
  if (Number.isNaN(x) || !(a > 0) || !(b > 0)) return NaN;
  if (a <= 2 || b <= 2) return beta.pdf(x, a, b);
  return Math.exp(betaLogPdf(x, a, b));
}

/** log B(a, b). */
export function logBeta(a: number, b: number): number {
  if (!(a > 0) || !(b > 0)) return NaN;
  return betaln(a, b);
}

function clamp01(v: number): number {
  if (v < 0) return 0;
  if (v > 1) return 1;
  return v;
}
