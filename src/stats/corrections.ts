/**
 * Multiple-testing corrections. Every function returns adjusted p-values in the input order,
 * capped at 1, with the usual monotonicity (as R's p.adjust):
 *   bonferroni          min(1, m p_i)
 *   holm                step-down: sorted ascending, adj_(i) = max_{j<=i} min(1, (m-j+1) p_(j))
 *   benjamini_hochberg  step-up:   sorted ascending, adj_(i) = min_{j>=i} min(1, m/j p_(j))
 * Input convention (never throws): NaN is treated as 1 (no evidence) and values are clamped
 * into [0, 1]. An empty input gives an empty output.
 */

export type CorrectionMethod = 'none' | 'bonferroni' | 'holm' | 'benjamini_hochberg';

export const CORRECTION_METHODS: readonly CorrectionMethod[] = ['none', 'bonferroni', 'holm', 'benjamini_hochberg'];

function sanitize(pValues: readonly number[]): number[] {
  return pValues.map((p) => (Number.isNaN(p) ? 1 : p < 0 ? 0 : p > 1 ? 1 : p));
}

/** Indices sorted by ascending p-value (stable for ties). */
function ascendingOrder(p: readonly number[]): number[] {
  return p.map((_, i) => i).sort((a, b) => p[a] - p[b] || a - b);
}

export function bonferroni(pValues: readonly number[]): number[] {
  const p = sanitize(pValues);
  const m = p.length;
  return p.map((v) => Math.min(1, v * m));
}

export function holm(pValues: readonly number[]): number[] {
  const p = sanitize(pValues);
  const m = p.length;
  const order = ascendingOrder(p);
  const out = new Array<number>(m);
  let running = 0;
  order.forEach((idx, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p[idx]));
    out[idx] = running;
  });
  return out;
}

export function benjaminiHochberg(pValues: readonly number[]): number[] {
  const p = sanitize(pValues);
  const m = p.length;
  const order = ascendingOrder(p);
  const out = new Array<number>(m);
  let running = 1;
  for (let rank = m - 1; rank >= 0; rank--) {
    const idx = order[rank];
    running = Math.min(running, Math.min(1, (m / (rank + 1)) * p[idx]));
    out[idx] = running;
  }
  return out;
}

/** Dispatcher; 'none' returns the sanitized p-values unchanged. */
export function adjust(pValues: readonly number[], method: CorrectionMethod): number[] {
  switch (method) {
    case 'bonferroni':
      return bonferroni(pValues);
    case 'holm':
      return holm(pValues);
    case 'benjamini_hochberg':
      return benjaminiHochberg(pValues);
    case 'none':
    default:
      return sanitize(pValues);
  }
}
