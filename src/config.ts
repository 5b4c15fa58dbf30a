/**
 * Every environment setting, parsed and validated once at startup. Nothing else reads process.env.
 * A bad value stops startup with a message naming the setting (never its value: it may be a secret).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROLES, type Role } from './db/schema/users.js';
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
  /** Identity-provider mode (AUTH_PROVIDER=cognito): the user pool, app client, seams and group mapping. */
  idp: IdpConfig;
  loginMaxAttempts: number;
  loginLockoutMinutes: number;
  firstSuperuser: { email: string; password: string; username: string } | undefined;
  rateLimitEnabled: boolean;
  sdkRateLimitPerMinute: number;
  trustedProxies: boolean | string[] | number;
  cacheEnabled: boolean;
  /** SCHEDULER_ENABLED: run the background job loop in this process (default on; off under ENVIRONMENT=test). */
  schedulerEnabled: boolean;
  logLevel: string;
  bodyLimitBytes: number;
  /** Audit stream, compliance, notifications, AI, ETL (see PlatformManagementConfig). */
  platform: PlatformManagementConfig;
  /**
   * INTEGRATIONS_ENCRYPTION_KEY: 32 bytes as base64 or 64 hex digits, encrypting integration secrets at rest.
   * Unset: a key is derived from SECRET_KEY (HKDF-SHA256, modules/integrations/secrets.ts), so changing SECRET_KEY
   * then makes stored integration secrets unreadable.
   */
  integrationsEncryptionKey: Buffer | undefined;
  /** DATABASE_POOL_SIZE: connections per process to PostgreSQL (PGlite has one). */
  databasePoolSize: number;
  /** DATABASE_STATEMENT_TIMEOUT_SECONDS: a statement running longer is cancelled; 0 = no limit. */
  databaseStatementTimeoutSeconds: number;
  /** METRICS_TOKEN: when set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: traces are exported over OTLP/HTTP when set; tracing is off otherwise. */
  tracing: { endpoint: string; serviceName: string } | undefined;
  /** WEB_DIST_DIR: the built dashboard served at `/` (relative to the working directory); missing means API only. */
  webDistDir: string;
  /** SDK_STREAM_HEARTBEAT_SECONDS: heartbeat of GET /sdk/ruleset/stream (SDKs reconnect after 3 silent periods). */
  sdkStreamHeartbeatSeconds: number;
  /** CORS_ORIGINS: origins allowed to call the client-facing routes from a browser (`*`: any); empty: no CORS. */
  corsOrigins: string[];
  /** Warehouse analysis (full profile, beta): see WarehouseConfig. */
  warehouse: WarehouseConfig;
  /**
   * RESULTS_READ_TIMEOUT_MS: the longest one statement of a results read may run on PostgreSQL (default 2000); past
   * it the route answers 202 and the experiment's rollups are built in the background.
   */
  resultsReadTimeoutMs: number;
}

export interface IdpConfig {
  /** IDP_USER_POOL_ID (`<region>_<id>`) and IDP_CLIENT_ID; either unset refuses every sign-in (not_configured). */
  userPoolId: string | undefined;
  clientId: string | undefined;
  /** The pool's region, from the pool id. */
  region: string | undefined;
  /** IDP_ISSUER: the `iss` a token must carry; unset means the pool's public issuer (both of its forms are accepted). */
  issuer: string | undefined;
  /** IDP_JWKS_URL: where the signing keys are read; default `<issuer>/.well-known/jwks.json`. */
  jwksUrl: string | undefined;
  /** IDP_ENDPOINT: the provider API used for sign-in, sign-up and the user record; default the region's public one. */
  endpoint: string | undefined;
  /** IDP_GROUP_ROLE_MAPPING: group name (case-sensitive) -> role. */
  groupRoles: Record<string, Role>;
  /** IDP_ADMIN_GROUPS: membership gives is_superuser and ADMIN. */
  adminGroups: string[];
}

export interface WarehouseConfig {
  /**
   * WAREHOUSE_CREDENTIALS_KEYS: comma-separated base64 32-byte keys, newest first (writes use the first, every one
   * decrypts). Unset: connection routes answer 503 credentials_unavailable. Malformed: refused at startup in staging
   * and production, treated as unset elsewhere.
   */
  credentialsKeys: Buffer[] | undefined;
  maxQueryTimeoutSeconds: number;
  maxBytesPerQuery: number;
  maxRunsPerDay: number;
  /** Warehouse calls in flight per process; a call finding none free gets 429 warehouse_busy. */
  maxConcurrentJobs: number;
  /** Runs executing at once across the deployment (the rest wait queued). */
  maxConcurrentRuns: number;
  /** WAREHOUSE_DUCKDB_DIR: DuckDB connection paths resolve inside it (default DATA_DIR/warehouse). */
  duckdbDir: string;
}

export interface SmtpConfig {
  host: string;
  port: number;
  /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  requireTls: boolean;
  user: string | undefined;
  password: string | undefined;
  from: string;
  /** SMTP_CONNECTION_TIMEOUT_SECONDS: connecting and the server's greeting together. */
  connectionTimeoutMs: number;
  /** SMTP_SOCKET_TIMEOUT_SECONDS: the longest the server may stay silent mid-conversation. */
  socketTimeoutMs: number;
  /** SMTP_SEND_TIMEOUT_SECONDS: one message from connecting to the server's acceptance (a server that trickles). */
  sendTimeoutMs: number;
}

export interface LlmConfig {
  /** An OpenAI-compatible base URL (…/v1) or the full …/chat/completions endpoint. */
  apiUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
}

export interface EtlConfig {
  region: string;
  /** Glue endpoint override (tests, VPC endpoints); unset uses the regional AWS endpoint. */
  glueEndpoint: string | undefined;
  /** job_type accepted by the API -> Glue job name. */
  jobs: Record<string, string>;
  crawlers: string[];
  /** `database.table` names partitions may be added to. */
  tables: string[];
  /** Explicit AWS credentials; unset uses the SDK's default chain (environment, profile, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  /** ETL_GLUE_CONNECTION_TIMEOUT_SECONDS: connecting to the Glue endpoint, per attempt. */
  connectionTimeoutMs: number;
  /** ETL_GLUE_REQUEST_TIMEOUT_SECONDS: one Glue request from sending to the whole answer, per attempt (3 attempts). */
  requestTimeoutMs: number;
}

export interface PlatformManagementConfig {
  auditStreamHeartbeatSeconds: number;
  /** AUDIT_STREAM_MAX_CONNECTIONS: open audit streams per API process (each account: at most 5 of them). */
  auditStreamMaxConnections: number;
  /**
   * COMPLIANCE_HMAC_KEY signs the audit chain. Unset: derived from SECRET_KEY, so changing SECRET_KEY then makes
   * earlier signatures fail verification; set it explicitly in production.
   */
  complianceHmacKey: string;
  smtp: SmtpConfig | undefined;
  chatWebhooks: { allowedHosts: string[]; allowHttp: boolean; timeoutMs: number };
  notificationRetry: { maxAttempts: number; baseDelayMs: number };
  llm: LlmConfig | undefined;
  etl: EtlConfig;
}

const DEFAULT_CHAT_HOSTS = 'hooks.slack.com,chat.googleapis.com,discord.com,*.webhook.office.com';
const NAME = /^[A-Za-z0-9_.-]{1,255}$/;

function parseList(env: Env, name: string, fallback = ''): string[] {
  return (env[name] ?? fallback).split(',').map((s) => s.trim()).filter(Boolean);
}

function parseNames(env: Env, name: string): string[] {
  const names = parseList(env, name);
  if (names.some((n) => !NAME.test(n))) throw new ConfigError(`${name} must list names of letters, digits, _ . -`);
  return names;
}

function parseUrl(env: Env, name: string): string | undefined {
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

/** ETL_GLUE_JOBS: comma-separated `job_type=glue_job_name` (or just a name, used as both). */
function parseEtlJobs(env: Env): Record<string, string> {
  const jobs: Record<string, string> = {};
  for (const item of parseList(env, 'ETL_GLUE_JOBS')) {
    const [type, job = type] = item.split('=', 2).map((s) => s.trim());
    if (!NAME.test(type) || !NAME.test(job)) throw new ConfigError('ETL_GLUE_JOBS must list job_type=glue_job_name pairs');
    jobs[type] = job;
  }
  return jobs;
}

function parsePlatformManagement(env: Env, secretKey: string): PlatformManagementConfig {
  const smtpHost = env.SMTP_HOST?.trim();
  const smtpPort = parseInteger(env, 'SMTP_PORT', 587, 1, 65535);
  const llmUrl = parseUrl(env, 'LLM_API_URL');
  const llmKey = env.LLM_API_KEY?.trim();
  const tables = parseNames(env, 'ETL_GLUE_TABLES');
  if (tables.some((t) => t.split('.').length !== 2)) throw new ConfigError('ETL_GLUE_TABLES must list database.table names');
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim();
  return {
    auditStreamHeartbeatSeconds: parseInteger(env, 'AUDIT_STREAM_HEARTBEAT_SECONDS', 15, 1, 300),
    auditStreamMaxConnections: parseInteger(env, 'AUDIT_STREAM_MAX_CONNECTIONS', 200, 1, 100_000),
    complianceHmacKey:
      env.COMPLIANCE_HMAC_KEY?.trim() || createHmac('sha256', secretKey).update('uplift compliance audit chain').digest('hex'),
    smtp: smtpHost
      ? {
          host: smtpHost,
          port: smtpPort,
          secure: parseBool(env, 'SMTP_SECURE', smtpPort === 465),
          requireTls: parseBool(env, 'SMTP_REQUIRE_TLS', false),
          user: env.SMTP_USER?.trim() || undefined,
          password: env.SMTP_PASSWORD || undefined,
          from: env.SMTP_FROM?.trim() || 'Uplift <uplift@localhost>',
          connectionTimeoutMs: parseInteger(env, 'SMTP_CONNECTION_TIMEOUT_SECONDS', 10, 1, 300) * 1000,
          socketTimeoutMs: parseInteger(env, 'SMTP_SOCKET_TIMEOUT_SECONDS', 30, 1, 600) * 1000,
          sendTimeoutMs: parseInteger(env, 'SMTP_SEND_TIMEOUT_SECONDS', 60, 1, 3600) * 1000,
        }
      : undefined,
    chatWebhooks: {
      allowedHosts: parseList(env, 'CHAT_WEBHOOK_ALLOWED_HOSTS', DEFAULT_CHAT_HOSTS).map((h) => h.toLowerCase()),
      allowHttp: parseBool(env, 'CHAT_WEBHOOK_ALLOW_HTTP', false),
      timeoutMs: parseInteger(env, 'CHAT_WEBHOOK_TIMEOUT_SECONDS', 10, 1, 120) * 1000,
    },
    notificationRetry: {
      maxAttempts: parseInteger(env, 'NOTIFICATION_MAX_ATTEMPTS', 3, 1, 10),
      baseDelayMs: parseInteger(env, 'NOTIFICATION_RETRY_BASE_MS', 2000, 0, 600_000),
    },
    llm:
      llmUrl && llmKey
        ? {
            apiUrl: llmUrl,
            apiKey: llmKey,
            model: env.LLM_MODEL?.trim() || 'gpt-4o-mini',
            timeoutMs: parseInteger(env, 'LLM_TIMEOUT_SECONDS', 30, 1, 300) * 1000,
          }
        : undefined,
    etl: {
      region: env.ETL_AWS_REGION?.trim() || env.AWS_REGION?.trim() || 'us-east-1',
      glueEndpoint: parseUrl(env, 'ETL_GLUE_ENDPOINT'),
      jobs: parseEtlJobs(env),
      crawlers: parseNames(env, 'ETL_GLUE_CRAWLERS'),
      tables,
      credentials:
        accessKeyId && secretAccessKey
          ? { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN?.trim() || undefined }
          : undefined,
      connectionTimeoutMs: parseInteger(env, 'ETL_GLUE_CONNECTION_TIMEOUT_SECONDS', 5, 1, 120) * 1000,
      requestTimeoutMs: parseInteger(env, 'ETL_GLUE_REQUEST_TIMEOUT_SECONDS', 30, 1, 600) * 1000,
    },
  };
}

/** pino's levels, most to least severe; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function parseTracing(env: Env): Config['tracing'] {
  const endpoint = parseUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (!endpoint) return undefined;
  return { endpoint, serviceName: env.OTEL_SERVICE_NAME?.trim() || 'uplift' };
}

const USER_POOL_ID = /^((?:eusc-[a-z]{2}|[a-z]{2})-(?:gov-)?[a-z]+-\d)_[A-Za-z0-9]+$/;
const DEFAULT_GROUP_ROLES: Record<string, Role> = { Admins: 'ADMIN', Developers: 'DEVELOPER', Analysts: 'ANALYST', Viewers: 'VIEWER' };

/** IDP_GROUP_ROLE_MAPPING: a JSON object of group name -> role name (any letter case); it replaces the defaults. */
function parseGroupRoles(env: Env): Record<string, Role> {
  const raw = env.IDP_GROUP_ROLE_MAPPING?.trim();
  if (!raw) return { ...DEFAULT_GROUP_ROLES };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('IDP_GROUP_ROLE_MAPPING must be a JSON object of group name to role');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError('IDP_GROUP_ROLE_MAPPING must be a JSON object of group name to role');
  }
  const mapping: Record<string, Role> = {};
  for (const [group, value] of Object.entries(parsed)) {
    const role = typeof value === 'string' ? value.trim().toUpperCase() : '';
    if (!(ROLES as readonly string[]).includes(role)) {
      throw new ConfigError(`IDP_GROUP_ROLE_MAPPING maps a group to an unknown role; roles are ${ROLES.join(', ')}`);
    }
    mapping[group] = role as Role;
  }
  return mapping;
}

function parseIdp(env: Env): IdpConfig {
  const userPoolId = env.IDP_USER_POOL_ID?.trim() || undefined;
  const region = userPoolId ? USER_POOL_ID.exec(userPoolId)?.[1] : undefined;
  if (userPoolId && !region) throw new ConfigError('IDP_USER_POOL_ID must have the form <region>_<id>, e.g. eu-west-1_AbC123');
  return {
    userPoolId,
    clientId: env.IDP_CLIENT_ID?.trim() || undefined,
    region,
    issuer: parseUrl(env, 'IDP_ISSUER')?.replace(/\/+$/, ''),
    jwksUrl: parseUrl(env, 'IDP_JWKS_URL'),
    endpoint: parseUrl(env, 'IDP_ENDPOINT'),
    groupRoles: parseGroupRoles(env),
    adminGroups: parseList(env, 'IDP_ADMIN_GROUPS', 'Admins,SuperUsers'),
  };
}

type Env = Record<string, string | undefined>;

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

/** A 256-bit key given as 64 hex digits or base64 (standard or URL-safe) of 32 bytes. */
function parseKey32(env: Env, name: string): Buffer | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const isHex = /^[0-9a-fA-F]{64}$/.test(raw);
  if (!isHex && !/^[A-Za-z0-9+/_-]{43}=?$/.test(raw)) throw new ConfigError(`${name} must be 32 bytes as 64 hex digits or base64`);
  return Buffer.from(raw, isHex ? 'hex' : 'base64');
}

function parseCredentialsKeys(env: Env, strict: boolean): Buffer[] | undefined {
  const items = parseList(env, 'WAREHOUSE_CREDENTIALS_KEYS');
  if (items.length === 0) return undefined;
  const keys = items.filter((item) => /^[A-Za-z0-9+/_-]{43}=?$/.test(item)).map((item) => Buffer.from(item, 'base64'));
  if (keys.length === items.length && keys.every((k) => k.length === 32)) return keys;
  if (strict) throw new ConfigError('WAREHOUSE_CREDENTIALS_KEYS must list base64 keys of 32 bytes, separated by commas');
  return undefined;
}

function parseWarehouse(env: Env, environment: Config['environment'], dataDir: string): WarehouseConfig {
  return {
    credentialsKeys: parseCredentialsKeys(env, environment === 'staging' || environment === 'production'),
    maxQueryTimeoutSeconds: parseInteger(env, 'WAREHOUSE_MAX_QUERY_TIMEOUT_SECONDS', 1800, 1, 86_400),
    maxBytesPerQuery: parseInteger(env, 'WAREHOUSE_MAX_BYTES_PER_QUERY', 214_748_364_800, 1, Number.MAX_SAFE_INTEGER),
    maxRunsPerDay: parseInteger(env, 'WAREHOUSE_MAX_RUNS_PER_DAY', 200, 1, 100_000),
    maxConcurrentJobs: parseInteger(env, 'WAREHOUSE_MAX_CONCURRENT_JOBS', 4, 1, 256),
    maxConcurrentRuns: parseInteger(env, 'WAREHOUSE_MAX_CONCURRENT_RUNS', 2, 1, 1000),
    duckdbDir: env.WAREHOUSE_DUCKDB_DIR?.trim() || `${dataDir}/warehouse`,
  };
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
  if (!secret && env.DATABASE_URL?.trim()) {
    throw new ConfigError('SECRET_KEY must be set when DATABASE_URL is set: every process of a shared deployment signs with it');
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
    corsOrigins: parseCorsOrigins(env),
    warehouse: parseWarehouse(env, environment, env.DATA_DIR?.trim() || './data'),
    resultsReadTimeoutMs: parseInteger(env, 'RESULTS_READ_TIMEOUT_MS', 2000, 1, 600_000),
  };
}

/**
 * CORS_ORIGINS: comma-separated origins (`https://app.example.com`, a port allowed, nothing after it) or `*`.
 * Origins are compared as browsers send them, so each is kept in its serialised form (lower case, default port dropped).
 */
function parseCorsOrigins(env: Env): string[] {
  const problem = 'CORS_ORIGINS must list origins (scheme://host[:port]) or *';
  return parseList(env, 'CORS_ORIGINS').map((item) => {
    if (item === '*') return item;
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      throw new ConfigError(problem);
    }
    const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !bare) throw new ConfigError(problem);
    return url.origin;
  });
}
