import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { utcYear } from '../db/schema/exact-timestamp.js';
import { MAX_VALIDATION_ERRORS } from './validation.js';

/**
 * Two AJV configurations (each as a stop-at-first-error and a list-every-error instance). Bodies are validated strictly: no type coercion (a JSON `null` or `"5"` is not a boolean or
 * integer) and unknown properties are reported, never silently removed. Query strings, paths and headers arrive
 * as text, so they are coerced (`limit=5` is an integer). `verbose` lets the error mapper tell a null or missing
 * value from a wrong one; the value itself is never put into a response.
 */
// ajv-formats is CommonJS with a `default` export; under NodeNext the function sits one level down.
const addFormats = ajvFormats as unknown as typeof ajvFormats.default;

const common: Options = {
  allErrors: true,
  verbose: true,
  removeAdditional: false,
  useDefaults: true,
  strict: false,
  keywords: ['x-stability', 'example'],
};

/**
 * `x-safe-number` (added to every numeric schema at compile time, never shown in the OpenAPI document): a number
 * must be finite, an integer a safe integer. `?skip=Infinity`, `1e999` in JSON or `9223372036854775808` are 422,
 * never a value the database refuses with a 500.
 */
export const SAFE_NUMBER = 'x-safe-number';

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ ...common, ...options });
  addFormats(ajv, ['uuid', 'email', 'date-time', 'date', 'uri', 'iso-date-time']);
  // RFC 3339 allows the year 0000 (and an offset can reach it from 0001-01-01); PostgreSQL's first year is 1.
  const rfc3339 = fullFormats['date-time'] as { validate: (text: string) => boolean };
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => rfc3339.validate(text) && utcYear(text) >= 1 });
  ajv.addKeyword({
    keyword: SAFE_NUMBER,
    type: 'number',
    schemaType: 'string',
    // A fractional value for an integer is the `type` keyword's error; this one adds only range and finiteness.
    validate: (kind: string, data: number) => Number.isFinite(data) && (kind !== 'integer' || Math.abs(data) <= Number.MAX_SAFE_INTEGER),
  });
  return ajv;
}

const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SUBSCHEMAS = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties'];

/** A copy of a schema with the safe-number rule on every subschema that admits numbers. */
export function withSafeNumbers(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const source = schema as Record<string, unknown>;
  const copy: Record<string, unknown> = { ...source };
  for (const key of SUBSCHEMAS) if (key in source) copy[key] = withSafeNumbers(source[key]);
  for (const key of SUBSCHEMA_LISTS) {
    if (Array.isArray(source[key])) copy[key] = (source[key] as unknown[]).map(withSafeNumbers);
  }
  for (const key of SUBSCHEMA_MAPS) {
    const map = source[key];
    if (map && typeof map === 'object') {
      copy[key] = Object.fromEntries(Object.entries(map).map(([name, sub]) => [name, withSafeNumbers(sub)]));
    }
  }
  const types = Array.isArray(source.type) ? source.type : [source.type];
  if (types.includes('integer')) copy[SAFE_NUMBER] = types.includes('number') ? 'number' : 'integer';
  else if (types.includes('number')) copy[SAFE_NUMBER] = 'number';
  return copy;
}

const bodyAjv = makeAjv({ coerceTypes: false });
const textAjv = makeAjv({ coerceTypes: 'array' });
const firstErrorBodyAjv = makeAjv({ coerceTypes: false, allErrors: false });
const firstErrorTextAjv = makeAjv({ coerceTypes: 'array', allErrors: false });

/**
 * Above this many values (keys, items and scalars) an invalid input is reported by its first error only: listing
 * every error of a 5 MiB body would cost one error object per extra key, tens of MB and seconds of event loop.
 */
export const FULL_REPORT_MAX_VALUES = 10_000;

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * A valid input is checked once, by a validator that stops at the first error. An invalid one is checked again for
 * every error only when it is small, and at most MAX_VALIDATION_ERRORS are kept either way.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const isBody = httpPart === 'body';
  const safe = withSafeNumbers(schema) as object;
  const firstError = (isBody ? firstErrorBodyAjv : firstErrorTextAjv).compile(safe);
  let everyError: ValidateFunction | undefined;
  const validate: Validate = (data: unknown) => {
    if (firstError(data)) {
      validate.errors = null;
      return true;
    }
    let errors = firstError.errors ?? [];
    if (!exceeds(data, FULL_REPORT_MAX_VALUES)) {
      everyError ??= (isBody ? bodyAjv : textAjv).compile(safe);
      everyError(data);
      errors = everyError.errors ?? errors;
    }
    validate.errors = errors.slice(0, MAX_VALIDATION_ERRORS);
    return false;
  };
  return validate as ReturnType<FastifySchemaCompiler<unknown>>;
};

/** Whether a JSON value holds more than `limit` values, walking at most `limit + 1` of them. */
function exceeds(data: unknown, limit: number): boolean {
  let seen = 0;
  const stack: unknown[] = [data];
  while (stack.length) {
    const value = stack.pop();
    if (++seen > limit) return true;
    if (Array.isArray(value)) {
      if (seen + value.length > limit) return true;
      stack.push(...value);
    } else if (value !== null && typeof value === 'object') {
      let count = seen;
      for (const key in value) {
        if (++count > limit) return true;
        stack.push((value as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}
