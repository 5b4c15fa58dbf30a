/**
 * Postgres error conditions the services turn into domain answers. Drivers differ in where they put the SQLSTATE:
 * node-postgres on the error, Drizzle wraps it as `cause`; both are read here, once for every module.
 */
export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';
export const LOCK_NOT_AVAILABLE = '55P03';
export const INSUFFICIENT_PRIVILEGE = '42501';
/** statement_timeout (DATABASE_STATEMENT_TIMEOUT_SECONDS) cancelled the statement. */
export const QUERY_CANCELED = '57014';

interface PgErrorLike {
  code?: string;
  constraint?: string;
  cause?: { code?: string; constraint?: string };
}

/** The SQLSTATE of a failed query, or undefined for any other error. */
export function sqlState(error: unknown): string | undefined {
  const e = error as PgErrorLike | undefined;
  return e?.code ?? e?.cause?.code;
}

/** The constraint a failed query violated, when the driver reports it. */
export function violatedConstraint(error: unknown): string | undefined {
  const e = error as PgErrorLike | undefined;
  return e?.constraint ?? e?.cause?.constraint;
}

export const isUniqueViolation = (error: unknown): boolean => sqlState(error) === UNIQUE_VIOLATION;

/** An ILIKE pattern matching `text` anywhere, with the pattern characters in it taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** SQLSTATEs of a server going away: admin shutdown, crash shutdown, cannot connect now. */
const SERVER_GOING_AWAY = new Set(['57P01', '57P02', '57P03']);
const UNREACHABLE_MESSAGES = /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection closed/i;

/**
 * Whether a failure means the database cannot be reached right now (refused, cut, restarting), as opposed to a
 * failed statement: the request is answered 503 with Retry-After instead of 500, and the next one tries again.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error as (PgErrorLike & { message?: string; errno?: string }) | undefined, depth = 0; e && depth < 4; depth++) {
    const code = e.code;
    if (code && (UNREACHABLE_CODES.has(code) || SERVER_GOING_AWAY.has(code) || code.startsWith('08'))) return true;
    if (typeof e.message === 'string' && UNREACHABLE_MESSAGES.test(e.message)) return true;
    e = e.cause as typeof e;
  }
  return false;
}
