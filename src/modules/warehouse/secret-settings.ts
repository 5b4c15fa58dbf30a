/**
 * Which connection settings are secrets, or look like them (issue 27): the one rule deciding what a DEVELOPER or
 * ANALYST may see of a connection's settings. Credentials are never shown to anyone; a setting holding a secret
 * (a password in a URL, a token pasted into a path) is shown only to ADMIN, who manages connections.
 */
import { hasRole, type Actor } from '../../platform/auth.js';
import type { FieldSpec } from './connectors/types.js';

/** Names that say a value is secret. */
const SECRET_NAME = /pass(word|wd|phrase)|pwd|secret|token|key|credential|private|auth|cert|signature|cookie|bearer|session/i;

/** Values that carry a credential, whatever the setting is called. */
const SECRET_VALUE = [
  /[a-z][a-z0-9+.-]*:\/\/[^\s/?#@]*@/i, // user[:password]@ in a URL
  /-----BEGIN [A-Z ]*-----/, // a PEM key or certificate
  /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\./, // a JWT
  /\b(dapi[0-9a-f]{32}|A[KS]IA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36}|xox[abposr]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35})/, // vendor tokens
  /(password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key)\s*[=:]/i, // key=value pairs in a connection string
  /^[A-Za-z0-9+/_=-]{40,}$/, // a long opaque string: a key or token
];

export function isSecretSetting(name: string, value: unknown, spec?: FieldSpec): boolean {
  if (spec?.secret || SECRET_NAME.test(name)) return true;
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? null);
  return SECRET_VALUE.some((pattern) => pattern.test(text));
}

/** The settings `actor` may see: all of them for ADMIN, none that are or look secret for anyone else. */
export function visibleSettings(settings: Record<string, unknown>, specs: Record<string, FieldSpec>, actor: Actor): Record<string, unknown> {
  if (hasRole(actor, 'ADMIN')) return settings;
  return Object.fromEntries(Object.entries(settings).filter(([name, value]) => !isSecretSetting(name, value, specs[name])));
}
