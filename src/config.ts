/**
 * Every environment setting, parsed and validated once at startup. Nothing else reads process.env.
 * A bad value stops startup with a message naming the setting (never its value: it may be a secret).
 */
export type DeploymentProfile = 'core' | 'full';
export type AuthProvider = 'local' | 'cognito';

export interface Config {
  host: string;
  port: number;
  environment: 'development' | 'test' | 'staging' | 'production';
  deploymentProfile: DeploymentProfile;
  databaseUrl: string | undefined;
  dataDir: string;
  redisUrl: string | undefined;
  secretKey: string;
  secretKeyIsDefault: boolean;
  accessTokenExpireMinutes: number;
  bcryptRounds: number;
  authProvider: AuthProvider;
  syncRolesOnLogin: boolean;
  idpSelfSignupEnabled: boolean;
  loginMaxAttempts: number;
  loginLockoutMinutes: number;
  firstSuperuser: { email: string; password: string; username: string } | undefined;
  rateLimitEnabled: boolean;
  sdkRateLimitPerMinute: number;
  trustedProxies: boolean | string[] | number;
  cacheEnabled: boolean;
  logLevel: string;
  bodyLimitBytes: number;
}

export const DEV_SECRET_KEY = 'uplift-dev-secret-key-change-me-in-production';

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'on', 't', 'y']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off', 'f', 'n']);

/** Booleans accept true/false in any case, also 1/0, yes/no, on/off, t/f, y/n; anything else stops startup. */
export function parseBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const word = raw.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw new ConfigError(`${name} must be a boolean (true/false, 1/0, yes/no, on/off, t/f, y/n)`);
}

function parseInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

function parseChoice<T extends string>(env: Env, name: string, fallback: T, choices: readonly T[]): T {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (!(choices as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of: ${choices.join(', ')}`);
  }
  return raw as T;
}

/** TRUSTED_PROXIES: unset/false trusts no proxy; `true`; a hop count; or comma-separated addresses/CIDRs. */
function parseTrustedProxies(raw: string | undefined): boolean | string[] | number {
  const value = raw?.trim();
  if (!value || FALSE_WORDS.has(value.toLowerCase())) return false;
  if (TRUE_WORDS.has(value.toLowerCase()) && value !== '1') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

export function loadConfig(env: Env = process.env): Config {
  const environment = parseChoice(env, 'ENVIRONMENT', 'development', ['development', 'test', 'staging', 'production']);
  const secret = env.SECRET_KEY?.trim();
  if (!secret && (environment === 'production' || environment === 'staging')) {
    throw new ConfigError('SECRET_KEY must be set in staging and production');
  }
  if (secret && secret.length < 32 && environment === 'production') {
    throw new ConfigError('SECRET_KEY must be at least 32 characters in production');
  }
  const email = env.FIRST_SUPERUSER_EMAIL?.trim();
  const password = env.FIRST_SUPERUSER_PASSWORD;
  if (email && !password) throw new ConfigError('FIRST_SUPERUSER_PASSWORD must be set with FIRST_SUPERUSER_EMAIL');
  return {
    host: env.HOST?.trim() || '0.0.0.0',
    port: parseInteger(env, 'PORT', 8000, 0, 65535),
    environment,
    deploymentProfile: parseChoice(env, 'DEPLOYMENT_PROFILE', 'full', ['core', 'full']),
    databaseUrl: env.DATABASE_URL?.trim() || undefined,
    dataDir: env.DATA_DIR?.trim() || './data',
    redisUrl: env.REDIS_URL?.trim() || undefined,
    secretKey: secret || DEV_SECRET_KEY,
    secretKeyIsDefault: !secret,
    accessTokenExpireMinutes: parseInteger(env, 'ACCESS_TOKEN_EXPIRE_MINUTES', 60, 1, 525_600),
    bcryptRounds: parseInteger(env, 'BCRYPT_ROUNDS', 12, 4, 15),
    authProvider: parseChoice(env, 'AUTH_PROVIDER', 'local', ['local', 'cognito']),
    syncRolesOnLogin: parseBool(env, 'SYNC_ROLES_ON_LOGIN', true),
    idpSelfSignupEnabled: parseBool(env, 'IDP_SELF_SIGNUP_ENABLED', false),
    loginMaxAttempts: parseInteger(env, 'LOGIN_MAX_ATTEMPTS', 10, 1, 1000),
    loginLockoutMinutes: parseInteger(env, 'LOGIN_LOCKOUT_MINUTES', 15, 1, 1440),
    firstSuperuser: email && password
      ? { email, password, username: env.FIRST_SUPERUSER_USERNAME?.trim() || 'admin' }
      : undefined,
    rateLimitEnabled: parseBool(env, 'RATE_LIMIT_ENABLED', true),
    sdkRateLimitPerMinute: parseInteger(env, 'SDK_RATE_LIMIT_PER_MINUTE', 6000, 1, 10_000_000),
    trustedProxies: parseTrustedProxies(env.TRUSTED_PROXIES),
    cacheEnabled: parseBool(env, 'CACHE_ENABLED', false),
    logLevel: env.LOG_LEVEL?.trim() || (environment === 'test' ? 'silent' : 'info'),
    bodyLimitBytes: 5 * 1024 * 1024,
  };
}
