/**
 * Postgres error conditions the services turn into domain answers. Drivers differ in where they put the SQLSTATE:
 * node-postgres on the error, Drizzle wraps it as `cause`; both are read here, once for every module.
 */
export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';
export const LOCK_NOT_AVAILABLE = '55P03';
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
