/** Parsers of the grouped settings: platform management (audit stream, SMTP, chat, LLM, ETL), IdP, warehouse, tracing, CORS. */
import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import { ROLES, type Role } from '../platform/roles.js';
import { ConfigError, NAME, parseBool, parseInteger, parseList, parseNames, parseUrl, type Env } from './parse.js';
import type { Config, IdpConfig, PlatformManagementConfig, WarehouseConfig } from './types.js';

const DEFAULT_CHAT_HOSTS = 'hooks.slack.com,chat.googleapis.com,discord.com,*.webhook.office.com';

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

export function parsePlatformManagement(env: Env, secretKey: string): PlatformManagementConfig {
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

export function parseTracing(env: Env): Config['tracing'] {
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

export function parseIdp(env: Env): IdpConfig {
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
    revalidateSeconds: parseInteger(env, 'IDP_REVALIDATE_SECONDS', 900, 1, 86_400),
    revalidateGraceSeconds: parseInteger(env, 'IDP_REVALIDATE_GRACE_SECONDS', 3600, 0, 604_800),
  };
}

function parseCredentialsKeys(env: Env, strict: boolean): Buffer[] | undefined {
  const items = parseList(env, 'WAREHOUSE_CREDENTIALS_KEYS');
  if (items.length === 0) return undefined;
  const keys = items.filter((item) => /^[A-Za-z0-9+/_-]{43}=?$/.test(item)).map((item) => Buffer.from(item, 'base64'));
  if (keys.length === items.length && keys.every((k) => k.length === 32)) return keys;
  if (strict) throw new ConfigError('WAREHOUSE_CREDENTIALS_KEYS must list base64 keys of 32 bytes, separated by commas');
  return undefined;
}

const HOST_PATTERN = /^(\*\.)?[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * An allow-list of host names (`*.example.com` matching its subdomains), IP addresses and CIDRs; unset or empty is
 * undefined (no list). An entry that is none of these stops startup, naming the variable and the entry's position.
 */
function parseAllowedHosts(env: Env, name: string): string[] | undefined {
  const entries = parseList(env, name).map((e) => e.toLowerCase().replace(/\.$/, ''));
  entries.forEach((entry, i) => {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address);
    const validPrefix = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
    const valid = family ? validPrefix && extra === undefined : prefix === undefined && HOST_PATTERN.test(entry);
    if (!valid) throw new ConfigError(`${name} entry ${i + 1} is not a host name, *.domain, IP address or CIDR`);
  });
  return entries.length ? entries : undefined;
}

export function parseWarehouse(env: Env, environment: Config['environment'], dataDir: string): WarehouseConfig {
  return {
    credentialsKeys: parseCredentialsKeys(env, environment === 'staging' || environment === 'production'),
    maxQueryTimeoutSeconds: parseInteger(env, 'WAREHOUSE_MAX_QUERY_TIMEOUT_SECONDS', 1800, 1, 86_400),
    maxBytesPerQuery: parseInteger(env, 'WAREHOUSE_MAX_BYTES_PER_QUERY', 214_748_364_800, 1, Number.MAX_SAFE_INTEGER),
    maxRunsPerDay: parseInteger(env, 'WAREHOUSE_MAX_RUNS_PER_DAY', 200, 1, 100_000),
    maxConcurrentJobs: parseInteger(env, 'WAREHOUSE_MAX_CONCURRENT_JOBS', 4, 1, 256),
    maxConcurrentRuns: parseInteger(env, 'WAREHOUSE_MAX_CONCURRENT_RUNS', 2, 1, 1000),
    duckdbDir: env.WAREHOUSE_DUCKDB_DIR?.trim() || `${dataDir}/warehouse`,
    allowedHosts: parseAllowedHosts(env, 'WAREHOUSE_ALLOWED_HOSTS'),
    blockPrivateNetworks: parseBool(env, 'WAREHOUSE_BLOCK_PRIVATE_NETWORKS', false),
    // Spec limits: connection tests and validation each have a 30-second limit.
    checkSeconds: 30,
  };
}

/**
 * CORS_ORIGINS: comma-separated origins (`https://app.example.com`, a port allowed, nothing after it) or `*`.
 * Origins are compared as browsers send them, so each is kept in its serialised form (lower case, default port dropped).
 */
export function parseCorsOrigins(env: Env): string[] {
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
