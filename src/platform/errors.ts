/**
 * Domain errors carry their HTTP status; the one root error handler (platform/error-handler.ts) turns them into
 * `{detail}` bodies. Messages never contain submitted values or secrets.
 */
export type Loc = (string | number)[];

export interface ValidationIssue {
  type: string;
  loc: Loc;
  msg: string;
  ctx?: Record<string, unknown>;
}

export class DomainError extends Error {
  constructor(
    readonly statusCode: number,
    readonly detail: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : `HTTP ${statusCode}`);
  }
}

export class BadRequest extends DomainError {
  constructor(detail: unknown) {
    super(400, detail);
  }
}
export class Unauthorized extends DomainError {
  constructor(detail: string = COULD_NOT_VALIDATE) {
    super(401, detail, { 'WWW-Authenticate': 'Bearer' });
  }
}
export class Forbidden extends DomainError {
  constructor(detail: unknown = NOT_ENOUGH_PERMISSIONS) {
    super(403, detail);
  }
}
export class NotFound extends DomainError {
  constructor(detail: unknown = 'Not Found') {
    super(404, detail);
  }
}
export class Conflict extends DomainError {
  constructor(detail: unknown) {
    super(409, detail);
  }
}
export class Locked extends DomainError {
  constructor(detail: string, retryAfterSeconds: number) {
    super(423, detail, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}
export class TooManyRequests extends DomainError {
  constructor(retryAfterSeconds: number, detail = 'Rate limit exceeded') {
    super(429, detail, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}
export class NotImplemented extends DomainError {
  constructor(detail: unknown) {
    super(501, detail);
  }
}
export class ServiceUnavailable extends DomainError {
  constructor(detail: unknown, retryAfterSeconds?: number) {
    super(503, detail, retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : {});
  }
}
/** A 422 decided by the domain (beyond the schema), in the same list shape as schema validation errors. */
export class Unprocessable extends DomainError {
  constructor(issues: ValidationIssue | ValidationIssue[]) {
    super(422, Array.isArray(issues) ? issues : [issues]);
  }
}
/** An internal failure the domain detected (e.g. a lock wait ran out); answered as a 500 with the request id. */
export class InternalError extends Error {}

export const COULD_NOT_VALIDATE = 'Could not validate credentials';
export const NOT_ENOUGH_PERMISSIONS = 'Not enough permissions';
export const PARSE_ERROR = 'There was an error parsing the body';
export const BODY_TOO_LARGE = 'Request body too large';
export const BAD_URL = 'The request path is not a valid URL';
export const PATH_PARAMETER_TOO_LONG = 'A path parameter is too long';
export const INTERNAL_ERROR = 'Internal Server Error';
