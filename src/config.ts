/**
 * Every environment setting, parsed and validated once at startup. Nothing else reads process.env.
 * A bad value stops startup with a message naming the setting (never its value: it may be a secret).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ConfigError, parseBool, parseChoice, parseInteger, parseKey32, parseTrustedProxies, type Env } from './config/parse.js';
import { parseCorsOrigins, parseIdp, parsePlatformManagement, parseTracing, parseWarehouse } from './config/sections.js';
import type { Config } from './config/types.js';

export { ConfigError, parseBool };

/**
 * RESULTS_PARALLEL_QUERIES when unset: this machine's cores, from 2 to 8. A first computation is CPU-bound in the
 * database; more statements than cores only take turns (measured on 2 cores: 2 at a time is faster than 4).
 */
export const defaultResultsParallelQueries = (): number => Math.min(8, Math.max(2, availableParallelism()));
export type {
  AuthProvider,
  Config,
  DeploymentProfile,
  EtlConfig,
  IdpConfig,
  LlmConfig,
  PlatformManagementConfig,
  SmtpConfig,
  WarehouseConfig,
} from './config/types.js';

/** pino's levels, most to least severe; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Where a single-machine install keeps the signing key it generated, beside the embedded database. */
export const SECRET_KEY_FILE = 'secret_key';

/**
 * SECRET_KEY unset on embedded storage: the key generated on first start and kept in DATA_DIR/secret_key (mode
 * 0600), so tokens survive restarts and no install signs with a published key. Returns the environment with
 * SECRET_KEY filled in, and the file it came from. A shared deployment (DATABASE_URL set) must set SECRET_KEY:
 * loadConfig refuses to start without it, as every process behind the load balancer needs the same key.
 */
export function withDataDirSecret(env: Env): { env: Env; keyFile?: string } {
  const dataDir = env.DATA_DIR?.trim() || './data';
  const environment = env.ENVIRONMENT?.trim().toLowerCase();
  const mustBeGiven = environment === 'production' || environment === 'staging' || Boolean(env.DATABASE_URL?.trim());
  if (env.SECRET_KEY?.trim() || mustBeGiven || dataDir.startsWith('memory://')) return { env };
  const keyFile = join(dataDir, SECRET_KEY_FILE);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    writeFileSync(keyFile, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  chmodSync(keyFile, 0o600);
  const key = readFileSync(keyFile, 'utf8').trim();
  if (key.length < 32) throw new ConfigError(`SECRET_KEY is unset and ${keyFile} holds no usable key: remove it or set SECRET_KEY`);
  return { env: { ...env, SECRET_KEY: key }, keyFile };
}

export interface LoadOptions {
  /**
   * False only for a process that uses no key derived from SECRET_KEY: it signs and verifies no token, encrypts no
   * secret and writes no audit entry (`uplift migrate`). SECRET_KEY is then neither required nor checked, and
   * `secretKey` is a random key nothing must rely on. The server always loads with the default (true).
   */
  requireSecretKey?: boolean;
}

export function loadConfig(env: Env = process.env, options: LoadOptions = {}): Config {
  const environment = parseChoice(env, 'ENVIRONMENT', 'development', ['development', 'test', 'staging', 'production']);
  const secret = env.SECRET_KEY?.trim();
  if (options.requireSecretKey ?? true) {
    if (!secret && (environment === 'production' || environment === 'staging')) {
      throw new ConfigError('SECRET_KEY must be set in staging and production');
    }
    if (secret && secret.length < 32 && environment === 'production') {
      throw new ConfigError('SECRET_KEY must be at least 32 characters in production');
    }
    if (!secret && env.DATABASE_URL?.trim()) {
      throw new ConfigError('SECRET_KEY must be set when DATABASE_URL is set: every process of a shared deployment signs with it');
    }
  }
  // Unset on embedded storage and not read from DATA_DIR (see withDataDirSecret): a random key for this process only.
  const secretKey = secret || randomBytes(32).toString('base64url');
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
    secretKey,
    secretKeyIsDefault: !secret,
    accessTokenExpireMinutes: parseInteger(env, 'ACCESS_TOKEN_EXPIRE_MINUTES', 60, 1, 525_600),
    bcryptRounds: parseInteger(env, 'BCRYPT_ROUNDS', 12, 4, 15),
    authProvider: parseChoice(env, 'AUTH_PROVIDER', 'local', ['local', 'cognito']),
    syncRolesOnLogin: parseBool(env, 'SYNC_ROLES_ON_LOGIN', true),
    idpSelfSignupEnabled: parseBool(env, 'IDP_SELF_SIGNUP_ENABLED', false),
    idp: parseIdp(env),
    loginMaxAttempts: parseInteger(env, 'LOGIN_MAX_ATTEMPTS', 10, 1, 1000),
    loginLockoutMinutes: parseInteger(env, 'LOGIN_LOCKOUT_MINUTES', 15, 1, 1440),
    firstSuperuser: email && password
      ? { email, password, username: env.FIRST_SUPERUSER_USERNAME?.trim() || 'admin' }
      : undefined,
    rateLimitEnabled: parseBool(env, 'RATE_LIMIT_ENABLED', true),
    sdkRateLimitPerMinute: parseInteger(env, 'SDK_RATE_LIMIT_PER_MINUTE', 6000, 1, 10_000_000),
    trustedProxies: parseTrustedProxies(env.TRUSTED_PROXIES),
    cacheEnabled: parseBool(env, 'CACHE_ENABLED', false),
    schedulerEnabled: parseBool(env, 'SCHEDULER_ENABLED', environment !== 'test'),
    logLevel: parseChoice(env, 'LOG_LEVEL', environment === 'test' ? 'silent' : 'info', LOG_LEVELS),
    bodyLimitBytes: 5 * 1024 * 1024,
    platform: parsePlatformManagement(env, secretKey),
    integrationsEncryptionKey: parseKey32(env, 'INTEGRATIONS_ENCRYPTION_KEY'),
    databasePoolSize: parseInteger(env, 'DATABASE_POOL_SIZE', 20, 1, 1000),
    databaseStatementTimeoutSeconds: parseInteger(env, 'DATABASE_STATEMENT_TIMEOUT_SECONDS', 60, 0, 86_400),
    metricsToken: env.METRICS_TOKEN?.trim() || undefined,
    tracing: parseTracing(env),
    webDistDir: env.WEB_DIST_DIR?.trim() || 'web/dist',
    sdkStreamHeartbeatSeconds: parseInteger(env, 'SDK_STREAM_HEARTBEAT_SECONDS', 15, 1, 60),
    sdkStreamMaxConnections: parseInteger(env, 'SDK_STREAM_MAX_CONNECTIONS', 1000, 1, 100_000),
    sdkStreamMaxBufferBytes: 8 << 20,
    corsOrigins: parseCorsOrigins(env),
    warehouse: parseWarehouse(env, environment, env.DATA_DIR?.trim() || './data'),
    resultsReadTimeoutMs: parseInteger(env, 'RESULTS_READ_TIMEOUT_MS', 2000, 1, 600_000),
    resultsMaxStalenessSeconds: parseInteger(env, 'RESULTS_MAX_STALENESS_SECONDS', 5, 0, 300),
    resultsRollupIntervalSeconds: parseInteger(env, 'RESULTS_ROLLUP_INTERVAL_SECONDS', 60, 1, 86_400),
    // On wherever the background jobs run (so off under ENVIRONMENT=test unless asked for).
    resultsCommitRollupMs: parseInteger(env, 'RESULTS_COMMIT_ROLLUP_MS', parseBool(env, 'SCHEDULER_ENABLED', environment !== 'test') ? 1_000 : 0, 0, 60_000),
    schedulerTickSeconds: parseInteger(env, 'SCHEDULER_TICK_SECONDS', 10, 1, 3_600),
    resultsParallelQueries: parseInteger(env, 'RESULTS_PARALLEL_QUERIES', defaultResultsParallelQueries(), 1, 64),
  };
}
