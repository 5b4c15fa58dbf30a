/**
 * Thompson-sampling allocation weights for K Bernoulli arms.
 *
 * Arm i has posterior Beta(1 + s_i, 1 + f_i) (uniform prior; f_i = trials_i - s_i). The
 * weight of arm i is P(arm i has the largest rate), estimated by Monte Carlo over `draws`
 * joint posterior draws with a seeded PRNG (mulberry32; Gamma variates by Marsaglia–Tsang,
 * normals by Box–Muller; Beta = G1 / (G1 + G2)), so the result is deterministic for a seed.
 * Ties (only possible through rounding) go to the lowest index.
 *
 * Minimum exploration floor: every arm gets at least `floor`; the arms below it are raised to
 * it and the remaining mass is shared by the others in proportion to their Monte Carlo
 * weights (repeated until stable, "water filling"). If floor * K >= 1 all weights are 1/K.
 *
 * Returns null for invalid input (negative / non-finite counts, successes > trials, draws not
 * a positive integer, floor not in [0, 1]); an empty arm list gives [].
 */

export interface ArmTrials {
  successes: number;
  trials: number;
}

export interface ThompsonOptions {
  /** Monte Carlo draws (default 10 000) */
  draws?: number;
  /** PRNG seed (default 1) */
  seed?: number;
  /** minimum weight per arm, in [0, 1] (default 0) */
  floor?: number;
}

/** mulberry32: small, fast, deterministic 32-bit PRNG. Returns uniforms in (0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return u + 1 / 8589934592; // shift by half a step: never exactly 0 or 1
  };
}

function normal(rand: () => number): number {
  const u1 = rand();
  const u2 = rand();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** Gamma(shape, 1) variate (Marsaglia & Tsang 2000); shape < 1 via the u^(1/shape) boost. */
export function sampleGamma(shape: number, rand: () => number): number {
  if (shape < 1) return sampleGamma(shape + 1, rand) * Math.pow(rand(), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normal(rand);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = rand();
    if (u < 1 - 0.0331 * x * x * x * x) return d * v;
    if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** Beta(a, b) variate. */
export function sampleBeta(a: number, b: number, rand: () => number): number {
  const x = sampleGamma(a, rand);
  const y = sampleGamma(b, rand);
  const s = x + y;
  return s > 0 ? x / s : 0.5;
}

/**
 * Apply a minimum weight per arm to weights summing to 1 (water filling, see above).
 * Returns uniform weights if floor * K >= 1.
 */
export function applyFloor(weights: readonly number[], floor: number): number[] {
  const k = weights.length;
  if (k === 0) return [];
  if (!(floor > 0)) return [...weights];
  if (floor * k >= 1) return weights.map(() => 1 / k);
  const fixed = new Array<boolean>(k).fill(false);
  const out = [...weights];
  for (let iter = 0; iter <= k; iter++) {
    let fixedCount = 0;
    let freeMass = 0;
    for (let i = 0; i < k; i++) {
      if (fixed[i]) fixedCount++;
      else freeMass += weights[i];
    }
    const remaining = 1 - floor * fixedCount;
    let changed = false;
    for (let i = 0; i < k; i++) {
      if (fixed[i]) {
        out[i] = floor;
        continue;
      }
      const w = freeMass > 0 ? (weights[i] / freeMass) * remaining : remaining / (k - fixedCount);
      if (w < floor) {
        fixed[i] = true;
        changed = true;
      }
      out[i] = w;
    }
    if (!changed) break;
  }
  for (let i = 0; i < k; i++) if (fixed[i]) out[i] = floor;
  return out;
}

/** Thompson-sampling weights (sum to 1, each >= floor); null on invalid input. */
export function thompsonWeights(arms: readonly ArmTrials[], options: ThompsonOptions = {}): number[] | null {
  const draws = options.draws ?? 10_000;
  const seed = options.seed ?? 1;
  const floor = options.floor ?? 0;
  if (!Number.isInteger(draws) || draws <= 0 || !Number.isFinite(seed)) return null;
  if (!Number.isFinite(floor) || floor < 0 || floor > 1) return null;
  for (const a of arms) {
    if (!Number.isFinite(a.successes) || !Number.isFinite(a.trials)) return null;
    if (a.successes < 0 || a.trials < 0 || a.successes > a.trials) return null;
  }
  const k = arms.length;
  if (k === 0) return [];
  if (k === 1) return [1];
  const rand = mulberry32(seed);
  const wins = new Array<number>(k).fill(0);
  const alphas = arms.map((a) => 1 + a.successes);
  const betas = arms.map((a) => 1 + a.trials - a.successes);
  for (let d = 0; d < draws; d++) {
    let best = 0;
    let bestValue = -1;
    for (let i = 0; i < k; i++) {
      const v = sampleBeta(alphas[i], betas[i], rand);
      if (v > bestValue) {
        bestValue = v;
        best = i;
      }
    }
    wins[best]++;
  }
  return applyFloor(
    wins.map((w) => w / draws),
    floor,
  );
}
