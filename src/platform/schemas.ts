import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';

/** A string enum with `type: string` so OpenAPI shows it and AJV reports `enum` (FastAPI's type name). */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * A nullable scalar/object/array: `type: [X, 'null']` rather than anyOf, so a wrong value gives one clear error.
 * Only for schemas with a single `type`.
 */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const s = schema as unknown as Record<string, unknown>;
  const copy: Record<string, unknown> = { ...s, type: [s.type, 'null'] };
  if (Array.isArray(s.enum)) copy.enum = [...(s.enum as unknown[]), null];
  return Type.Unsafe<Static<T> | null>(copy);
}

export const Uuid = (options: Record<string, unknown> = {}) => Type.String({ format: 'uuid', ...options });
export const DateTime = (options: Record<string, unknown> = {}) => Type.String({ format: 'date-time', ...options });

export const ValidationItem = Type.Object({
  type: Type.String(),
  loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
  msg: Type.String(),
  ctx: Type.Optional(Type.Object({}, { additionalProperties: true })),
});

/** `{detail}`: a sentence, a list of validation items (422), or a structured object (e.g. segment_in_use). */
export const ErrorBody = Type.Object(
  { detail: Type.Unknown({ description: 'A message, a list of validation items, or a structured object' }) },
  { additionalProperties: true },
);
export const ValidationErrorBody = Type.Object({ detail: Type.Array(ValidationItem) });

const DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request',
  401: 'Missing or invalid credentials',
  403: 'Role or superuser check failed',
  404: 'Not found',
  409: 'Conflict',
  413: 'Request body too large',
  422: 'Validation error',
  423: 'Account locked (see Retry-After)',
  429: 'Rate limit exceeded (see Retry-After)',
  500: 'Internal error (carries request_id)',
  501: 'Not implemented in this deployment',
  503: 'Temporarily unavailable (see Retry-After)',
};

/** Standard error responses for a route's OpenAPI description. */
export function errorResponses(...codes: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const code of codes) {
    out[code] = code === 422 ? { ...ValidationErrorBody, description: DESCRIPTIONS[422] } : { ...ErrorBody, description: DESCRIPTIONS[code] ?? 'Error' };
  }
  return out;
}

export const Pagination = (defaults: { limit: number; max?: number }) =>
  Type.Object({
    skip: Type.Integer({ minimum: 0, default: 0 }),
    limit: Type.Integer({ minimum: 1, ...(defaults.max ? { maximum: defaults.max } : {}), default: defaults.limit }),
  });

export const MessageBody = Type.Object({ message: Type.String() });

/** A free-form JSON object (context, metadata, configuration): typed as a record so code can read its keys. */
export const JsonObject = (options: Record<string, unknown> = {}) =>
  Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });
