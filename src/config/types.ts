/** The shape of the parsed settings (src/config.ts parses them; every other file imports them from there). */
import type { Role } from '../platform/roles.js';

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
  /** SDK_STREAM_MAX_CONNECTIONS: open GET /sdk/ruleset/stream per API process (default 1000; one key: at most 100). */
  sdkStreamMaxConnections: number;
  /** Unsent bytes an SDK stream may hold (a client that does not read) before it is cut off; no setting (8 MiB). */
  sdkStreamMaxBufferBytes: number;
  /** CORS_ORIGINS: origins allowed to call the client-facing routes from a browser (`*`: any); empty: no CORS. */
  corsOrigins: string[];
  /** Warehouse analysis (full profile, beta): see WarehouseConfig. */
  warehouse: WarehouseConfig;
  /**
   * RESULTS_READ_TIMEOUT_MS: the longest one statement of a results read may run on PostgreSQL (default 2000); past
   * it the route answers 202 and the experiment's rollups are built in the background.
   */
  resultsReadTimeoutMs: number;
  /** RESULTS_MAX_STALENESS_SECONDS: how far a cached results read may be behind the committed events (default 5). */
  resultsMaxStalenessSeconds: number;
  /** RESULTS_ROLLUP_INTERVAL_SECONDS: how often the results-rollup job runs (default 60). */
  resultsRollupIntervalSeconds: number;
  /**
   * RESULTS_COMMIT_ROLLUP_MS: the least time between two rollups of one experiment driven by its commits of events
   * (default 1000 where the background jobs run, SCHEDULER_ENABLED; 0 turns it off, leaving the results-rollup job).
   */
  resultsCommitRollupMs: number;
  /** SCHEDULER_TICK_SECONDS: how often the background-job loop looks for due jobs (default 10). */
  schedulerTickSeconds: number;
  /**
   * RESULTS_PARALLEL_QUERIES: statements a first computation of results (no rollup yet) runs at once on PostgreSQL,
   * each on its own connection (default: the machine's cores, 2 to 8; 1 runs them one after the other). Held below
   * DATABASE_POOL_SIZE.
   */
  resultsParallelQueries: number;
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
  /** IDP_REVALIDATE_SECONDS: an API key's owner is re-checked with the provider when the key is used this long after the last check (default 900). */
  revalidateSeconds: number;
  /** IDP_REVALIDATE_GRACE_SECONDS: while the provider is unreachable, the last answer stands this much longer (default 3600); then the key is refused with 503. */
  revalidateGraceSeconds: number;
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
  /**
   * WAREHOUSE_ALLOWED_HOSTS: comma-separated host names (`*.example.com` for its subdomains), IP addresses and CIDRs,
   * lower case. When set, a connection may reach only a listed host, or one whose addresses all fall in the list.
   */
  allowedHosts: string[] | undefined;
  /**
   * WAREHOUSE_BLOCK_PRIVATE_NETWORKS (default false, so a warehouse on this host still works): when true, loopback,
   * private (RFC 1918), shared (CGNAT), unique-local IPv6 and unspecified addresses are refused as well. Link-local and
   * cloud metadata addresses are refused whatever it says.
   */
  blockPrivateNetworks: boolean;
  /**
   * The bound on a connection test and on a source validation, sign-in included: 30 seconds, fixed by the spec and
   * not an environment setting. It is a field so tests can shorten it instead of waiting half a minute.
   */
  checkSeconds: number;
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
