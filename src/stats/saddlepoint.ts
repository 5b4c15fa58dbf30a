/**
 * Catherine Loader's saddle-point building blocks ("Fast and Accurate Computation of
 * Binomial Probabilities", 2000), as used by R's nmath (stirlerr.c, bd0.c, dbinom.c,
 * dpois.c, dhyper.c).
 *
 * They give log-densities whose absolute error stays near machine precision even for
 * counts in the billions, where `lgamma(n+1) - lgamma(k+1) - ...` would lose digits to
 * cancellation. Internal helpers: not re-exported from the package index.
 */
import gammaln from '@stdlib/math-base-special-gammaln';

const LN_SQRT_2PI = 0.918938533204672741780329736406; // log(sqrt(2*pi))
const LN_2PI = 1.837877066409345483560659472811; // log(2*pi)

const S0 = 1 / 12;
const S1 = 1 / 360;
const S2 = 1 / 1260;
const S3 = 1 / 1680;
const S4 = 1 / 1188;

/**
 * Stirling's-formula error: log(n!) - log(sqrt(2*pi*n) * (n/e)^n), for n > 0.
 * Small n is evaluated directly from lgamma (absolute error ~1e-15, which is what the
 * callers need because they add it to other log terms); larger n uses the asymptotic series.
 */
export function stirlerr(n: number): number {
  if (n <= 0) return 0;
  if (n <= 15) return gammaln(n + 1) - (n + 0.5) * Math.log(n) + n - LN_SQRT_2PI;
  const nn = n * n;
  if (n > 500) return (S0 - S1 / nn) / n;
  if (n > 80) return (S0 - (S1 - S2 / nn) / nn) / n;
  if (n > 35) return (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n;
  return (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n;
}

/** Deviance term bd0(x, np) = x*log(x/np) + np - x, computed without cancellation. */
export function bd0(x: number, np: number): number {
  if (Math.abs(x - np) < 0.1 * (x + np)) {
    let v = (x - np) / (x + np);
    let s = (x - np) * v;
    if (Math.abs(s) < Number.MIN_VALUE) return s;
    let ej = 2 * x * v;
    v = v * v;
    for (let j = 1; j < 1000; j++) {
      ej *= v;
      const s1 = s + ej / (2 * j + 1);
      if (s1 === s) return s1;
      s = s1;
    }
  }
  return x * Math.log(x / np) + np - x;
}

/**
 * log of the binomial kernel Gamma(k+m+1) / (Gamma(k+1) Gamma(m+1)) p^k q^m for real k, m >= 0
 * (q = 1 - p given separately for accuracy). Taking k and m separately (rather than k and
 * n = k + m) keeps log(m) exact when m is small next to k.
 */
export function logBinomialKernel(k: number, m: number, p: number, q: number): number {
  const n = k + m;
  if (p === 0) return k === 0 ? 0 : -Infinity;
  if (q === 0) return m === 0 ? 0 : -Infinity;
  if (k === 0) {
    if (m === 0) return 0;
    return p < 0.1 ? -bd0(n, n * q) - n * p : n * Math.log(q);
  }
  if (m === 0) {
    return q < 0.1 ? -bd0(n, n * p) - n * q : n * Math.log(p);
  }
  if (k < 0 || m < 0) return -Infinity;
  const lc = stirlerr(n) - stirlerr(k) - stirlerr(m) - bd0(k, n * p) - bd0(m, n * q);
  const lf = LN_2PI + Math.log(k) + Math.log(m) - Math.log(n);
  return lc - 0.5 * lf;
}

/** log of the binomial probability C(n,x) p^x q^(n-x) (R's dbinom_raw, log scale). */
export function logDbinomRaw(x: number, n: number, p: number, q: number): number {
  if (x < 0 || x > n) return -Infinity;
  return logBinomialKernel(x, n - x, p, q);
}

/**
 * log of the hypergeometric probability of drawing x white balls when `draws` balls are
 * drawn without replacement from an urn with `white` white and `black` black balls.
 */
export function logDhyper(x: number, white: number, black: number, draws: number): number {
  if (x < 0 || draws < x || white < x || draws - x > black) return -Infinity;
  if (draws === 0) return x === 0 ? 0 : -Infinity;
  const total = white + black;
  const p = draws / total;
  const q = (total - draws) / total;
  const p1 = logDbinomRaw(x, white, p, q);
  const p2 = logDbinomRaw(draws - x, black, p, q);
  const p3 = logDbinomRaw(draws, total, p, q);
  return p1 + p2 - p3;
}

/** log of the Poisson "density" lambda^x e^-lambda / Gamma(x+1) for real x >= 0, lambda > 0. */
export function logDpoisRaw(x: number, lambda: number): number {
  if (lambda === 0) return x === 0 ? 0 : -Infinity;
  if (x === 0) return -lambda;
  if (!Number.isFinite(lambda)) return -Infinity;
  return -stirlerr(x) - bd0(x, lambda) - 0.5 * (LN_2PI + Math.log(x));
}
