import { Type, type Static } from 'typebox';
import { Unprocessable, type Loc, type ValidationIssue } from '../../platform/errors.js';
import { Nullable } from '../../platform/schemas.js';
import { toValidationIssues } from '../../platform/validation.js';
import { validatorCompiler } from '../../platform/validator.js';

/** Spec "Split URL configuration" and "Limits". */
export const MIN_URL_VARIANTS = 2;
export const ALLOCATION_TOTAL = 100;
export const ALLOCATION_TOLERANCE = 0.01;
export const DEFAULT_COOKIE_TTL_DAYS = 30;
export const ALLOCATIONS_MUST_SUM = 'Value error, URL variant traffic allocations must add up to 100 (within 0.01)';
export const URL_VARIANT_NAMES_UNIQUE = 'Value error, URL variant names must be unique';
export const NOT_FINITE = 'Input should be a finite number';

export const SplitUrlVariant = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    url: Type.String({ maxLength: 4096, description: 'Stored as given, not checked' }),
    traffic_allocation: Type.Number({ minimum: 0, maximum: 100 }),
  },
  { additionalProperties: false },
);

/** The shape; `normaliseSplitUrlConfig` adds the rules a schema cannot say (finite numbers, the sum, unique names). */
export const SplitUrlConfigInput = Type.Object(
  {
    variants: Type.Array(SplitUrlVariant, { minItems: MIN_URL_VARIANTS, maxItems: 100, description: 'The first is the control a holdout sends viewers to' }),
    cookie_name: Type.Optional(Nullable(Type.String({
      minLength: 1,
      maxLength: 128,
      pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$",
      description: 'null means split_url_{experiment_key}',
    }))),
    cookie_ttl_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, default: DEFAULT_COOKIE_TTL_DAYS })),
    canonical_url: Type.Optional(Nullable(Type.String({ maxLength: 4096, description: 'Stored; nothing reads it' }))),
  },
  { additionalProperties: false },
);

export interface SplitUrlConfig {
  variants: Array<Static<typeof SplitUrlVariant>>;
  cookie_name: string | null;
  cookie_ttl_days: number;
  canonical_url: string | null;
}

// The same strict body validator the routes use, so these 422s read exactly like schema failures.
const checkShape = validatorCompiler({ schema: SplitUrlConfigInput, httpPart: 'body' } as Parameters<typeof validatorCompiler>[0]) as unknown as {
  (value: unknown): boolean;
  errors?: Parameters<typeof toValidationIssues>[0] | null;
};

/** The problems of a candidate configuration, located under `loc` (e.g. ['body', 'split_url_config']). */
export function splitUrlConfigIssues(value: unknown, loc: Loc): ValidationIssue[] {
  const candidate = structuredClone(value);
  // JSON cannot carry NaN or Infinity, but a stored or programmatic value can; say so rather than "out of range".
  const variants = (candidate as { variants?: unknown } | null)?.variants;
  const notFinite = Array.isArray(variants)
    ? variants.flatMap((v, i) => {
        const allocation = (v as { traffic_allocation?: unknown } | null)?.traffic_allocation;
        return typeof allocation === 'number' && !Number.isFinite(allocation)
          ? [{ type: 'finite_number', loc: [...loc, 'variants', i, 'traffic_allocation'], msg: NOT_FINITE }]
          : [];
      })
    : [];
  if (!checkShape(candidate)) {
    const finiteLocs = new Set(notFinite.map((issue) => JSON.stringify(issue.loc)));
    const shape = toValidationIssues(checkShape.errors ?? [], 'body')
      .map((issue) => ({ ...issue, loc: [...loc, ...issue.loc.slice(1)] }))
      .filter((issue) => !finiteLocs.has(JSON.stringify(issue.loc)));
    return [...notFinite, ...shape];
  }
  if (notFinite.length) return notFinite;
  const valid = (candidate as { variants: SplitUrlConfig['variants'] }).variants;
  const issues: ValidationIssue[] = [];
  const total = valid.reduce((sum, v) => sum + v.traffic_allocation, 0);
  if (Math.abs(total - ALLOCATION_TOTAL) > ALLOCATION_TOLERANCE + 1e-9) {
    issues.push({ type: 'value_error', loc: [...loc, 'variants'], msg: ALLOCATIONS_MUST_SUM });
  }
  if (new Set(valid.map((v) => v.name)).size !== valid.length) {
    issues.push({ type: 'value_error', loc: [...loc, 'variants'], msg: URL_VARIANT_NAMES_UNIQUE });
  }
  return issues;
}

/**
 * Validates and normalises a `split_url_config` for storage: defaults filled (cookie_name null, canonical_url
 * null, cookie_ttl_days 30), allocations as numbers, unknown fields refused. Throws a 422 listing every problem.
 */
export function normaliseSplitUrlConfig(value: unknown, loc: Loc): SplitUrlConfig {
  const issues = splitUrlConfigIssues(value, loc);
  if (issues.length) throw new Unprocessable(issues);
  return toConfig(value as Static<typeof SplitUrlConfigInput>);
}

/** A stored configuration when it is still valid, else undefined (the preview answers 409 then). */
export function readStoredSplitUrlConfig(value: unknown): SplitUrlConfig | undefined {
  return splitUrlConfigIssues(value, []).length ? undefined : toConfig(value as Static<typeof SplitUrlConfigInput>);
}

function toConfig(input: Static<typeof SplitUrlConfigInput>): SplitUrlConfig {
  return {
    variants: input.variants.map((v) => ({ name: v.name, url: v.url, traffic_allocation: Number(v.traffic_allocation) })),
    cookie_name: input.cookie_name ?? null,
    cookie_ttl_days: input.cookie_ttl_days ?? DEFAULT_COOKIE_TTL_DAYS,
    canonical_url: input.canonical_url ?? null,
  };
}

/** For the experiments module where split URL is served (full profile): a sent configuration validated and normalised. */
export const splitUrlConfigs = {
  normalise: (value: unknown, loc: (string | number)[]): Record<string, unknown> => ({ ...normaliseSplitUrlConfig(value, loc) }),
};
