/** The settings' value parsers: each reads one variable and stops startup with a message naming it (never its value). */
export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

export const NAME = /^[A-Za-z0-9_.-]{1,255}$/;
const TRUE_WORDS = new Set(['true', '1', 'yes', 'on', 't', 'y']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off', 'f', 'n']);

export function parseList(env: Env, name: string, fallback = ''): string[] {
  return (env[name] ?? fallback).split(',').map((s) => s.trim()).filter(Boolean);
}

export function parseNames(env: Env, name: string): string[] {
  const names = parseList(env, name);
  if (names.some((n) => !NAME.test(n))) throw new ConfigError(`${name} must list names of letters, digits, _ . -`);
  return names;
}

export function parseUrl(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http or https URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http or https URL`);
  return raw;
}

/** Booleans accept true/false in any case, also 1/0, yes/no, on/off, t/f, y/n; anything else stops startup. */
export function parseBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const word = raw.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw new ConfigError(`${name} must be a boolean (true/false, 1/0, yes/no, on/off, t/f, y/n)`);
}

export function parseInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

export function parseChoice<T extends string>(env: Env, name: string, fallback: T, choices: readonly T[]): T {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (!(choices as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of: ${choices.join(', ')}`);
  }
  return raw as T;
}

/** TRUSTED_PROXIES: unset/false trusts no proxy; `true`; a hop count; or comma-separated addresses/CIDRs. */
export function parseTrustedProxies(raw: string | undefined): boolean | string[] | number {
  const value = raw?.trim();
  if (!value || FALSE_WORDS.has(value.toLowerCase())) return false;
  if (TRUE_WORDS.has(value.toLowerCase()) && value !== '1') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

/** A 256-bit key given as 64 hex digits or base64 (standard or URL-safe) of 32 bytes. */
export function parseKey32(env: Env, name: string): Buffer | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const isHex = /^[0-9a-fA-F]{64}$/.test(raw);
  if (!isHex && !/^[A-Za-z0-9+/_-]{43}=?$/.test(raw)) throw new ConfigError(`${name} must be 32 bytes as 64 hex digits or base64`);
  return Buffer.from(raw, isHex ? 'hex' : 'base64');
}
