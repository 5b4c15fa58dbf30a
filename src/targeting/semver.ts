/**
 * Semantic versions (semver 2.0.0 precedence), slightly lenient on input:
 *  - an optional leading `v` or `V` (`v1.2.3`);
 *  - minor and patch may be omitted and default to 0 (`1` = `1.0.0`, `1.2` = `1.2.0`);
 * otherwise the semver 2.0.0 grammar: numeric parts without leading zeros, prerelease
 * identifiers `[0-9A-Za-z-]+` (numeric ones without leading zeros), build metadata ignored
 * for precedence. Numbers above Number.MAX_SAFE_INTEGER are rejected.
 */

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  prerelease: Array<string | number>;
}

const SEMVER_RE =
  /^[vV]?(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?:\.(0|[1-9]\d*))?(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

/** Longest version string accepted (keeps parsing trivially cheap). */
export const MAX_SEMVER_LENGTH = 256;

export function parseSemver(input: unknown): SemVer | null {
  if (typeof input !== 'string' || input.length > MAX_SEMVER_LENGTH) return null;
  const m = SEMVER_RE.exec(input);
  if (!m) return null;
  const nums = [m[1], m[2] ?? '0', m[3] ?? '0'].map(Number);
  if (nums.some((n) => !Number.isSafeInteger(n))) return null;
  const prerelease: Array<string | number> = [];
  if (m[4] !== undefined) {
    for (const id of m[4].split('.')) {
      if (/^\d+$/.test(id)) {
        const n = Number(id);
        if (!Number.isSafeInteger(n)) return null;
        prerelease.push(n);
      } else prerelease.push(id);
    }
  }
  return { major: nums[0], minor: nums[1], patch: nums[2], prerelease };
}

function cmp(a: number | string, b: number | string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Semver 2.0.0 §11 precedence: -1, 0 or 1. */
export function compareSemver(a: SemVer, b: SemVer): number {
  const core = cmp(a.major, b.major) || cmp(a.minor, b.minor) || cmp(a.patch, b.patch);
  if (core !== 0) return core;
  const pa = a.prerelease;
  const pb = b.prerelease;
  // A version without prerelease has higher precedence than one with.
  if (pa.length === 0 || pb.length === 0) return pa.length === pb.length ? 0 : pa.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === y) continue;
    const xn = typeof x === 'number';
    const yn = typeof y === 'number';
    // Numeric identifiers have lower precedence than alphanumeric ones; alphanumerics compare in ASCII order.
    if (xn && !yn) return -1;
    if (!xn && yn) return 1;
    return cmp(x, y);
  }
  return cmp(pa.length, pb.length);
}
