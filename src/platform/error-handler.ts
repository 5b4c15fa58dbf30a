import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { QUERY_CANCELED, sqlState } from '../db/errors.js';
import {
  BAD_URL,
  BODY_TOO_LARGE,
  DomainError,
  INTERNAL_ERROR,
  PARSE_ERROR,
  PATH_PARAMETER_TOO_LONG,
  type ValidationIssue,
} from './errors.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { trailingSlashRedirects } from './trailing-slash.js';
import { toValidationIssues } from './validation.js';

/**
 * Paths the router refuses before any route runs (an undecodable segment, a path parameter over the router's
 * limit), answered like every other error: `{detail}`, never the path sent (Fastify's own answer repeats it).
 */
export function routerErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') reply.code(414).send({ detail: PATH_PARAMETER_TOO_LONG });
  else if (error.code === 'FST_ERR_BAD_URL') reply.code(400).send({ detail: BAD_URL });
  else internalError(error, request, reply);
}

/** Anything unexpected: logged with the request id, answered 500 with that id and never a stack. */
function internalError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  request.log.error({ err: error, request_id: request.id }, 'unhandled error');
  reply.code(500).send({ detail: INTERNAL_ERROR, request_id: request.id });
}

/**
 * The one root error handler: domain errors become `{detail}`, schema failures FastAPI-shaped 422 lists, body
 * problems 400/413, and anything unexpected a logged 500 whose body carries the request id (never a stack).
 */
export function installErrorHandling(
  app: FastifyInstance,
  /** Answers an unmatched request itself (the dashboard's client routes) and says so; runs after slash redirects. */
  fallback?: (request: FastifyRequest, reply: FastifyReply) => boolean,
): void {
  const redirectFor = trailingSlashRedirects(app);
  app.setNotFoundHandler((request, reply) => {
    const location = redirectFor(request.method, request.url);
    if (location) {
      reply.code(307).header('Location', location).send();
      return;
    }
    if (fallback?.(request, reply)) return;
    reply.code(404).send({ detail: 'Not Found' });
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof DomainError) {
      reply.headers(error.headers).code(error.statusCode).send({ detail: error.detail });
      return;
    }
    if (error.validation) {
      const issues: ValidationIssue[] = toValidationIssues(error.validation as never, error.validationContext ?? 'body');
      reply.code(422).send({ detail: issues });
      return;
    }
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 413) {
      reply.code(413).send({ detail: BODY_TOO_LARGE });
      return;
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      reply.code(415).send({ detail: 'Unsupported media type' });
      return;
    }
    if (error.statusCode === 400 && (error.code?.startsWith('FST_ERR_CTP') || error instanceof SyntaxError)) {
      reply.code(400).send({ detail: PARSE_ERROR });
      return;
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      request.log.info({ err: error }, 'client error');
      reply.code(error.statusCode).send({ detail: clientErrorDetail(error.statusCode) });
      return;
    }
    if (sqlState(error) === QUERY_CANCELED) {
      request.log.warn({ err: error, request_id: request.id }, 'statement timeout');
      reply.code(503).header('Retry-After', '5').send({ detail: STATEMENT_TIMEOUT });
      return;
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error, request_id: request.id }, 'database unavailable');
      reply.code(503).header('Retry-After', String(UNAVAILABLE_RETRY_SECONDS)).send({ detail: SERVICE_UNAVAILABLE });
      return;
    }
    internalError(error, request, reply);
  });
}

export const STATEMENT_TIMEOUT = 'The database took too long to answer; retry shortly.';
export const SERVICE_UNAVAILABLE = 'Service temporarily unavailable. Try again shortly.';
const UNAVAILABLE_RETRY_SECONDS = 5;

function clientErrorDetail(status: number): string {
  switch (status) {
    case 404:
      return 'Not Found';
    case 405:
      return 'Method Not Allowed';
    case 406:
      return 'Not Acceptable';
    case 415:
      return 'Unsupported media type';
    default:
      return 'Bad Request';
  }
}
