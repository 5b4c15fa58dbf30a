import { Socket } from 'node:net';
import pg from 'pg';
import type { Statement, TableRef } from '../types.js';
import {
  ADMIN_ROLE_REFUSED,
  failure,
  INFORMATION_SCHEMA_COLUMNS,
  openTimeoutMessage,
  WarehouseError,
  withTimeout,
  refusal,
  type Credentials,
  type Driver,
  type FailureCode,
  type OpenOptions,
  type Settings,
  type StatementResult,
  type WarehouseSession,
} from './types.js';

/** Managed-service roles that carry administrative rights (besides rolsuper itself). */
const ADMIN_ROLES = ['rds_superuser', 'azure_pg_admin', 'cloudsqlsuperuser', 'alloydbsuperuser'];
/** Built-in administrative users: the server's own and the managed services' (always superusers there). */
const POSTGRES_ADMIN_USERS = ['postgres', 'rdsadmin', 'cloudsqladmin', 'azure_superuser', 'alloydbadmin'];
/** Redshift's own superuser. */
const REDSHIFT_ADMIN_USERS = ['rdsdb'];

/** Postgres' SQLSTATE for a statement stopped by statement_timeout or a cancel request. */
const QUERY_CANCELED = '57014';

/** Everything but the search path decides where or how the password is sent. */
const endpointSettings = {
  host: { kind: 'host', required: true, maxLength: 255, endpoint: true },
  port: { kind: 'integer', min: 1, max: 65535, endpoint: true },
  database: { kind: 'string', required: true, maxLength: 63, endpoint: true },
  schema: { kind: 'string', maxLength: 63, endpoint: false },
  ssl: { kind: 'boolean', endpoint: true },
} as const;
const passwordCredentials = {
  username: { kind: 'string', required: true, maxLength: 63 },
  password: { kind: 'string', required: true, maxLength: 1024 },
} as const;

interface Flavour {
  defaultPort: number;
  /** True when the signed-in role is a built-in administrative role. */
  isAdmin(client: pg.Client): Promise<boolean>;
}

async function postgresIsAdmin(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ is_admin: boolean }>(
    `SELECT r.rolsuper OR EXISTS (
       SELECT 1 FROM pg_roles g WHERE g.rolname = ANY($1::text[]) AND pg_has_role(current_user, g.oid, 'MEMBER')
     ) AS is_admin
     FROM pg_roles r WHERE r.rolname = current_user`,
    [ADMIN_ROLES],
  );
  return rows[0]?.is_admin ?? false;
}

/**
 * Redshift keeps superusers in pg_user (its pg_roles lacks rolsuper) and grants of its administrative system roles
 * (sys:superuser, sys:secadmin, sys:dba) in svv_user_grants. The role names are constants: Redshift binds no arrays.
 */
async function redshiftIsAdmin(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ is_admin: boolean }>(
    `SELECT COALESCE((SELECT usesuper FROM pg_user WHERE usename = current_user), false)
       OR EXISTS (SELECT 1 FROM svv_user_grants WHERE user_name = current_user
                  AND role_name IN ('sys:superuser', 'sys:secadmin', 'sys:dba')) AS is_admin`,
  );
  return rows[0]?.is_admin ?? false;
}

/** PostgreSQL's SQLSTATE class 28: invalid authorization (a wrong password, an unknown role, no pg_hba entry). */
const AUTHORIZATION_CLASS = '28';

/** What pg's own errors say about a server that did not answer as PostgreSQL does (pg's fixed texts). */
function recognise(error: unknown): FailureCode | undefined {
  const { code, message = '' } = error as { code?: unknown; message?: string };
  if (typeof code === 'string' && code.startsWith(AUTHORIZATION_CLASS) && code.length === 5) return 'authentication_failed';
  if (message === 'The server does not support SSL connections' || message === 'There was an error establishing an SSL connection') return 'tls_failed';
  // pg's connectionTimeoutMillis destroys the socket with 'timeout expired' and ends the client as 'Connection terminated'.
  if (message === 'timeout expired' || message === 'Connection terminated') return 'timeout';
  if (message.startsWith('Connection terminated unexpectedly') || message.startsWith('received invalid response')) return 'unexpected_response';
  return undefined;
}

/**
 * A socket for pg whose connect resolves the host through the outbound guard's pinned lookup: pg connects with
 * (port, host), and the host name stays what TLS verifies the certificate against.
 */
function pinnedSocket(lookup: OpenOptions['lookup']): (() => Socket) | undefined {
  if (!lookup) return undefined;
  return () => {
    const socket = new Socket();
    const connect = socket.connect.bind(socket) as (options: { port: number; host: string; lookup: NonNullable<OpenOptions['lookup']> }) => Socket;
    socket.connect = ((port: number, host: string) => connect({ port, host, lookup })) as Socket['connect'];
    return socket;
  };
}

/** Drops a client's socket at once: end() waits for the server's goodbye, which a stalled server never sends. */
function dropSocket(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

async function openSession(flavour: Flavour, settings: Settings, credentials: Credentials, options: OpenOptions): Promise<WarehouseSession> {
  const openMs = options.connectTimeoutSeconds * 1000;
  const config: pg.ClientConfig = {
    host: String(settings.host),
    port: typeof settings.port === 'number' ? settings.port : flavour.defaultPort,
    database: String(settings.database),
    user: credentials.username,
    password: credentials.password,
    // TLS with a verified certificate unless the connection says ssl: false. pg does not fall back: a server that
    // refuses TLS ends the attempt before any password is sent.
    ssl: settings.ssl === false ? false : { rejectUnauthorized: true },
    connectionTimeoutMillis: openMs,
    // No statement_timeout in the startup message: connection poolers such as PgBouncer refuse startup parameters
    // they do not know. The client-side bound below covers the setup statements; each statement then sets its own.
    application_name: 'uplift-warehouse',
    stream: pinnedSocket(options.lookup),
  };
  const client = new pg.Client(config);
  // A dropped connection must not crash the process; the statement in flight rejects on its own.
  client.on('error', () => undefined);
  const drop = () => dropSocket(client);
  let signedIn = false;
  try {
    // connectionTimeoutMillis only bounds the TCP and sign-in exchange: a server that signs in and then stalls would
    // hold the setup statements for ever. One bound covers sign-in, setup and the administrative-role check.
    await withTimeout(
      options.connectTimeoutSeconds,
      (async () => {
        await client.connect();
        signedIn = true;
        await client.query("SET TIME ZONE 'UTC'");
        // The service checked schema against the identifier rules, so quoting it is enough.
        if (typeof settings.schema === 'string') await client.query(`SET search_path TO "${settings.schema}"`);
        if (await flavour.isAdmin(client)) {
          throw new WarehouseError('admin_role_refused', ADMIN_ROLE_REFUSED);
        }
      })(),
      drop,
      openTimeoutMessage(options.connectTimeoutSeconds),
    );
  } catch (error) {
    // After a timeout the socket is already dropped; otherwise the server gets its goodbye.
    await client.end().catch(() => undefined);
    // A statement the server cancelled during setup (57014) counts as the same bound.
    if (signedIn && (error as { code?: string }).code === QUERY_CANCELED) {
      throw new WarehouseError('query_timeout', openTimeoutMessage(options.connectTimeoutSeconds));
    }
    // Before sign-in completed, the bound running out means the server never answered as a warehouse would.
    if (!signedIn && error instanceof WarehouseError && error.code === 'query_timeout') throw refusal('timeout');
    throw failure('connection_failed', error, recognise);
  }

  /** Cancels through a second connection, as psql does: the statement stops, the session stays usable. */
  async function cancel(): Promise<void> {
    const pid = (client as unknown as { processID?: number }).processID;
    if (!pid) return;
    const canceller = new pg.Client(config);
    canceller.on('error', () => undefined);
    const dropCanceller = () => dropSocket(canceller);
    try {
      // Bounded too: shutdown waits for cancels, and a stalled server must not hold it.
      await withTimeout(options.connectTimeoutSeconds, (async () => {
        await canceller.connect();
        await canceller.query('SELECT pg_cancel_backend($1)', [pid]);
      })(), dropCanceller);
    } finally {
      dropCanceller();
      await canceller.end().catch(() => undefined);
    }
  }

  async function query(text: string, values: unknown[], timeoutSeconds: number) {
    try {
      // The server stops the statement at statement_timeout; the client-side bound covers a silent network, and
      // covers the SET as well (a server that stops answering would otherwise hold it for ever).
      return await withTimeout(
        timeoutSeconds + 5,
        (async () => {
          await client.query(`SET statement_timeout = ${Math.ceil(timeoutSeconds * 1000)}`);
          return client.query(text, values);
        })(),
        cancel,
      );
    } catch (error) {
      if ((error as { code?: string }).code === QUERY_CANCELED) {
        throw new WarehouseError('query_timeout', `The statement ran longer than ${timeoutSeconds} seconds and was stopped`);
      }
      throw failure('query_failed', error);
    }
  }

  return {
    async ping(timeoutSeconds) {
      await query('SELECT 1', [], timeoutSeconds);
    },
    async columns(table: TableRef, timeoutSeconds) {
      const [schema, name] = table;
      const { rows } = await query(
        INFORMATION_SCHEMA_COLUMNS,
        [schema, name],
        timeoutSeconds,
      );
      if (rows.length === 0) return undefined;
      return new Map(rows.map((r: { column_name: string; data_type: string }) => [r.column_name, r.data_type]));
    },
    async run(statement: Statement, limits): Promise<StatementResult> {
      const started = performance.now();
      const values = statement.params.map((p) => (p.value instanceof Date ? p.value.toISOString() : p.value));
      const { rows } = await query(statement.text, values, limits.timeoutSeconds);
      return { rows, elapsedMs: Math.round(performance.now() - started) };
    },
    cancel,
    close: () => client.end().catch(() => undefined),
  };
}

export const postgresDriver: Driver = {
  type: 'postgres',
  billsByBytes: false,
  keyPair: false,
  settings: endpointSettings,
  credentials: passwordCredentials,
  adminField: (_settings, credentials) => (POSTGRES_ADMIN_USERS.includes(credentials.username ?? '') ? ['credentials', 'username'] : undefined),
  checksRoleOnSave: true,
  host: (settings) => String(settings.host),
  load: async () => true,
  open: (settings, credentials, options) =>
    openSession({ defaultPort: 5432, isAdmin: postgresIsAdmin }, settings, credentials, options),
};

export const redshiftDriver: Driver = {
  ...postgresDriver,
  type: 'redshift',
  adminField: (_settings, credentials) => (REDSHIFT_ADMIN_USERS.includes(credentials.username ?? '') ? ['credentials', 'username'] : undefined),
  open: (settings, credentials, options) =>
    openSession({ defaultPort: 5439, isAdmin: redshiftIsAdmin }, settings, credentials, options),
};
