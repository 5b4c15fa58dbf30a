import type { Role } from '../../platform/roles.js';
import { hasRole, type Actor } from '../../platform/auth.js';
import { Conflict, DomainError, Forbidden, NotFound } from '../../platform/errors.js';

/** Spec "Errors": warehouse errors have the shape {detail: {code, message}}. */
export const notFound = (code: string, message: string) => new NotFound({ code, message });
export const conflict = (code: string, message: string) => new Conflict({ code, message });

export const CONNECTION_NOT_FOUND = notFound.bind(null, 'connection_not_found', 'Warehouse connection not found');
export const SOURCE_NOT_FOUND = notFound.bind(null, 'source_not_found', 'Warehouse source not found');
export const RUN_NOT_FOUND = notFound.bind(null, 'run_not_found', 'Warehouse run not found');
export const EXPERIMENT_NOT_FOUND = notFound.bind(null, 'experiment_not_found', 'Experiment not found');

export const credentialsUnavailable = () =>
  new DomainError(503, {
    code: 'credentials_unavailable',
    message: 'No credential encryption key is configured (WAREHOUSE_CREDENTIALS_KEYS)',
  });
export const credentialsUndecryptable = () =>
  conflict('credentials_undecryptable', "The connection's stored credentials cannot be decrypted with the configured keys; send new credentials");
/** A GET-modify-PUT repeats fields that cannot change: accepted when equal, refused at their place otherwise. */
export const cannotChange = (field: string) => ({ type: 'immutable', loc: ['body', field], msg: 'This field cannot change; send the stored value or leave it out' });

/** What a connection whose credentials were dropped (its settings changed where or how it signs in) answers. */
export const CREDENTIALS_REQUIRED_MESSAGE =
  "The connection's settings changed where or how it signs in, so its stored credentials were dropped; send new credentials";
export const credentialsRequired = () => conflict('credentials_required', CREDENTIALS_REQUIRED_MESSAGE);
export const warehouseBusy = () =>
  new DomainError(
    429,
    { code: 'warehouse_busy', message: 'Every warehouse job of this server is busy; try again shortly' },
    { 'Retry-After': '30' },
  );

/** Spec "Authentication": a refusal names the role needed and the caller's role. */
export function requireRole(actor: Actor, roles: readonly Role[]): void {
  if (hasRole(actor, ...roles)) return;
  throw new Forbidden({
    code: 'role_required',
    message: `This needs the role ${roles.join(' or ')}; your role is ${actor.role ?? 'none'}`,
    required_roles: roles,
    role: actor.role,
  });
}
