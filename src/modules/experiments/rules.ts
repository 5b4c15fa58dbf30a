/**
 * The experiment rules beyond the request schema, as pure functions: the routes' 422s and the wizard's validate
 * step say the same things.
 */
import type { ValidationIssue } from '../../platform/errors.js';

export { BAYESIAN_DEFAULTS, SEQUENTIAL_DEFAULTS } from './domain.js';

export const ONE_CONTROL = 'Value error, Exactly one variant must be the control';
export const ALLOCATIONS_SUM = 'Value error, Variant traffic allocations must add up to 100';
export const VARIANT_NAMES_UNIQUE = 'Value error, Variant names must be unique';
export const ONE_PRIMARY = 'Value error, At most one metric can be the primary metric';

/** Allocations are percentages entered by people (33.33 + 33.33 + 33.34): a tiny float error is not an error. */
const ALLOCATION_TOLERANCE = 1e-9;

interface VariantLike {
  name: string;
  is_control?: boolean;
  traffic_allocation: number;
}

export function variantIssues(variants: readonly VariantLike[], loc: (string | number)[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const problem = (msg: string) => issues.push({ type: 'value_error', loc, msg });
  if (variants.filter((v) => v.is_control === true).length !== 1) problem(ONE_CONTROL);
  const total = variants.reduce((sum, v) => sum + v.traffic_allocation, 0);
  if (Math.abs(total - 100) > ALLOCATION_TOLERANCE) problem(ALLOCATIONS_SUM);
  if (new Set(variants.map((v) => v.name)).size !== variants.length) problem(VARIANT_NAMES_UNIQUE);
  return issues;
}

/** Spec: exactly one primary metric when any is flagged primary (none flagged is allowed). */
export function metricIssues(metrics: readonly { is_primary?: boolean }[], loc: (string | number)[]): ValidationIssue[] {
  return metrics.filter((m) => m.is_primary === true).length > 1 ? [{ type: 'value_error', loc, msg: ONE_PRIMARY }] : [];
}

/**
 * The stored config of an optional analysis: what was sent completed with defaults, the defaults when the analysis
 * is enabled without one, else what is stored.
 */
export function completeConfig<T extends object>(
  sent: Partial<T> | null | undefined,
  enabled: boolean,
  stored: T | null,
  defaults: T,
): T | null {
  if (sent) return { ...defaults, ...sent };
  if (sent === null) return enabled ? { ...defaults } : null;
  return stored ?? (enabled ? { ...defaults } : null);
}
