/**
 * Maps AJV errors to FastAPI's 422 items `{type, loc, msg, ctx?}`. The submitted value is never repeated:
 * AJV runs with `verbose` only so that a null or missing value can be told apart from a wrong type.
 */
import type { ErrorObject } from 'ajv';
import type { Loc, ValidationIssue } from './errors.js';

const PART_TO_LOC: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

const TYPE_NAMES: Record<string, [string, string]> = {
  string: ['string_type', 'Input should be a valid string'],
  integer: ['int_parsing', 'Input should be a valid integer'],
  number: ['float_parsing', 'Input should be a valid number'],
  boolean: ['bool_parsing', 'Input should be a valid boolean'],
  object: ['dict_type', 'Input should be a valid dictionary'],
  array: ['list_type', 'Input should be a valid list'],
  null: ['none_required', 'Input should be None'],
};

const FORMATS: Record<string, [string, string]> = {
  uuid: ['uuid_parsing', 'Input should be a valid UUID'],
  email: ['value_error', 'value is not a valid email address'],
  'date-time': ['datetime_from_date_parsing', 'Input should be a valid datetime'],
  date: ['date_from_datetime_parsing', 'Input should be a valid date'],
  uri: ['url_parsing', 'Input should be a valid URL'],
};

function pathToLoc(instancePath: string): Loc {
  if (!instancePath) return [];
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

function quoteList(values: unknown[]): string {
  const quoted = values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v)));
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}` : quoted.join('');
}

export function toValidationIssue(error: ErrorObject, part: string): ValidationIssue {
  const base: Loc = [PART_TO_LOC[part] ?? part, ...pathToLoc(error.instancePath)];
  const p = error.params as Record<string, unknown>;
  const isMissing = error.data === undefined;
  switch (error.keyword) {
    case 'required':
      return { type: 'missing', loc: [...base, p.missingProperty as string], msg: 'Field required' };
    case 'additionalProperties':
      return { type: 'extra_forbidden', loc: [...base, p.additionalProperty as string], msg: 'Extra inputs are not permitted' };
    case 'type': {
      // Fastify hands a request without a body to validation as null: FastAPI calls that a missing body.
      const absentBody = part === 'body' && error.instancePath === '' && error.data === null;
      if (isMissing || absentBody) return { type: 'missing', loc: base, msg: 'Field required' };
      if (error.data === null) return { type: 'null_not_allowed', loc: base, msg: 'Field may not be null' };
      const wanted = String(Array.isArray(p.type) ? p.type[0] : p.type);
      const [type, msg] = TYPE_NAMES[wanted] ?? ['type_error', `Input should be of type ${wanted}`];
      return { type, loc: base, msg };
    }
    case 'enum': {
      const expected = quoteList(p.allowedValues as unknown[]);
      return { type: 'enum', loc: base, msg: `Input should be ${expected}`, ctx: { expected } };
    }
    case 'const': {
      const expected = quoteList([p.allowedValue]);
      return { type: 'literal_error', loc: base, msg: `Input should be ${expected}`, ctx: { expected } };
    }
    case 'minimum':
      return { type: 'greater_than_equal', loc: base, msg: `Input should be greater than or equal to ${p.limit}`, ctx: { ge: p.limit } };
    case 'exclusiveMinimum':
      return { type: 'greater_than', loc: base, msg: `Input should be greater than ${p.limit}`, ctx: { gt: p.limit } };
    case 'maximum':
      return { type: 'less_than_equal', loc: base, msg: `Input should be less than or equal to ${p.limit}`, ctx: { le: p.limit } };
    case 'exclusiveMaximum':
      return { type: 'less_than', loc: base, msg: `Input should be less than ${p.limit}`, ctx: { lt: p.limit } };
    case 'minLength':
      return { type: 'string_too_short', loc: base, msg: `String should have at least ${p.limit} character${p.limit === 1 ? '' : 's'}`, ctx: { min_length: p.limit } };
    case 'maxLength':
      return { type: 'string_too_long', loc: base, msg: `String should have at most ${p.limit} character${p.limit === 1 ? '' : 's'}`, ctx: { max_length: p.limit } };
    case 'minItems':
      return { type: 'too_short', loc: base, msg: `List should have at least ${p.limit} item${p.limit === 1 ? '' : 's'}`, ctx: { min_length: p.limit } };
    case 'maxItems':
      return { type: 'too_long', loc: base, msg: `List should have at most ${p.limit} item${p.limit === 1 ? '' : 's'}`, ctx: { max_length: p.limit } };
    case 'minProperties':
      return { type: 'too_short', loc: base, msg: `Dictionary should have at least ${p.limit} item${p.limit === 1 ? '' : 's'}`, ctx: { min_length: p.limit } };
    case 'maxProperties':
      return { type: 'too_long', loc: base, msg: `Dictionary should have at most ${p.limit} item${p.limit === 1 ? '' : 's'}`, ctx: { max_length: p.limit } };
    case 'uniqueItems':
      return { type: 'value_error', loc: base, msg: 'Value error, List items must be unique' };
    case 'pattern':
      return { type: 'string_pattern_mismatch', loc: base, msg: `String should match pattern '${p.pattern}'`, ctx: { pattern: p.pattern } };
    case 'format': {
      const [type, msg] = FORMATS[p.format as string] ?? ['value_error', `Input should be a valid ${p.format}`];
      return { type, loc: base, msg };
    }
    case 'x-safe-number':
      return typeof error.data === 'number' && !Number.isFinite(error.data)
        ? { type: 'finite_number', loc: base, msg: 'Input should be a finite number' }
        : { type: 'int_parsing_size', loc: base, msg: 'Input should be an integer between -9007199254740991 and 9007199254740991' };
    case 'multipleOf':
      return { type: 'multiple_of', loc: base, msg: `Input should be a multiple of ${p.multipleOf}`, ctx: { multiple_of: p.multipleOf } };
    default:
      return { type: 'value_error', loc: base, msg: 'Value error, Input is not valid' };
  }
}

/** A 422 lists at most this many issues: AJV's errors past this many are not read. */
export const MAX_VALIDATION_ERRORS = 50;

/**
 * Schema compositions (anyOf/oneOf, if/then) make AJV report every branch's failure and then a summary of its own.
 * The summaries are dropped and one item is kept per location and type (the first AJV reported), so that, as in
 * FastAPI, a field is not listed once per branch; a list of nothing but summaries keeps its first.
 */
export function toValidationIssues(errors: ErrorObject[], part: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors.slice(0, MAX_VALIDATION_ERRORS)) {
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const issue = toValidationIssue(error, part);
    const key = `${JSON.stringify(issue.loc)}|${issue.type}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  if (issues.length === 0 && errors.length > 0) issues.push(toValidationIssue(errors[0], part));
  return issues;
}
