import { randomUUID } from 'node:crypto';
import secureJson from 'secure-json-parse';
import type { Db, Executor } from '../../db/client.js';
import type { IntegrationRow, IntegrationType } from '../../db/schema/integrations.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import { exceedsDepth, MAX_JSON_DEPTH } from '../../platform/body-parsers.js';
import type { Clock } from '../../platform/clock.js';
import { BadRequest, Conflict, DomainError, NotFound, Unprocessable, type Loc } from '../../platform/errors.js';
import { PUBLIC_CONFIG_KEYS, type IntegrationCreate, type IntegrationUpdate, type IntegrationView } from './schemas.js';
import type { SecretBox } from './secrets.js';
import { hubSignatureMatches, sharedSecretMatches } from './signatures.js';
import * as store from './store.js';
import { isUniqueViolation } from '../../db/errors.js';

export const INTEGRATION_NOT_FOUND = 'Integration not found';
export const INTEGRATION_EXISTS = 'An integration of this type already exists; change it with PUT';
export const SECRETS_UNREADABLE =
  "This integration's stored secrets cannot be decrypted with the configured key; send a value (or null) for every stored secret";
export const WEBHOOK_AUTH_FAILED = 'Webhook authentication failed';
export const INVALID_JSON_PAYLOAD = 'Invalid JSON payload';

/** Spec "Code host configuration keys": all required except token, which only outbound calls (none yet) would use. */
const REQUIRED_KEYS: Record<IntegrationType, readonly string[]> = {
  github: ['repo_owner', 'repo_name', 'webhook_secret'],
  jira: [],
  salesforce: [],
};
const PUBLIC = new Set<string>(PUBLIC_CONFIG_KEYS);

export interface Delivery {
  rawBody: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

/** Where a delivery's outcome is written: deliveries change nothing, so the log is their only trace. */
export interface DeliveryLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface IntegrationsDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  secrets: SecretBox;
}

export type IntegrationsService = ReturnType<typeof createIntegrationsService>;

function toView(row: IntegrationRow): IntegrationView {
  return {
    id: row.id,
    integration_type: row.integrationType,
    is_active: row.isActive,
    encrypted_config: row.publicConfig,
    stored_secrets: row.secretNames,
    last_sync_at: row.lastSyncAt?.toISOString() ?? null,
    last_error: row.lastError,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** What the audit trail keeps of a configuration: the shown keys and the names of the secrets, never their values. */
function describe(row: IntegrationRow) {
  return { integration_type: row.integrationType, is_active: row.isActive, config: row.publicConfig, stored_secrets: row.secretNames };
}

function header(delivery: Delivery, name: string): string | undefined {
  const value = delivery.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

export function createIntegrationsService(deps: IntegrationsDeps) {
  const { db, audit, clock, secrets } = deps;

  function assertRequiredKeys(type: IntegrationType, config: Record<string, string>, loc: Loc): void {
    const missing = REQUIRED_KEYS[type].filter((key) => !config[key]);
    if (missing.length) throw new Unprocessable(missing.map((key) => ({ type: 'missing', loc: [...loc, key], msg: 'Field required' })));
  }

  /** Splits a configuration into the shown keys (stored as they are) and the sealed secrets. */
  function storedForm(type: IntegrationType, config: Record<string, string>) {
    const publicConfig: Record<string, string> = {};
    const secretValues: Record<string, string> = {};
    for (const key of Object.keys(config).sort()) (PUBLIC.has(key) ? publicConfig : secretValues)[key] = config[key];
    const secretNames = Object.keys(secretValues);
    return {
      publicConfig,
      secretNames,
      encryptedSecrets: secretNames.length ? secrets.seal(secretValues, type) : null,
    };
  }

  function openSecrets(row: IntegrationRow): Record<string, string> | undefined {
    return row.encryptedSecrets ? secrets.open(row.encryptedSecrets, row.integrationType) : {};
  }

  async function locked(tx: Executor, type: IntegrationType): Promise<IntegrationRow> {
    const row = await store.lockIntegration(tx, type);
    if (!row) throw new NotFound(INTEGRATION_NOT_FOUND);
    return row;
  }

  return {
    async list(): Promise<IntegrationView[]> {
      return (await store.listIntegrations(db)).map(toView);
    },

    async get(type: IntegrationType): Promise<IntegrationView> {
      const row = await store.findIntegration(db, type);
      if (!row) throw new NotFound(INTEGRATION_NOT_FOUND);
      return toView(row);
    },

    async create(actor: Actor, body: IntegrationCreate): Promise<IntegrationView> {
      const config = body.encrypted_config ?? {};
      assertRequiredKeys(body.integration_type, config, ['body', 'encrypted_config']);
      try {
        return await db.transaction(async (tx) => {
          if (await store.findIntegration(tx, body.integration_type)) throw new Conflict(INTEGRATION_EXISTS);
          const now = clock.now();
          const row = await store.insertIntegration(tx, {
            id: randomUUID(),
            integrationType: body.integration_type,
            isActive: body.is_active,
            ...storedForm(body.integration_type, config),
            createdAt: now,
            updatedAt: now,
          });
          await audit.record(tx, actor, { action: 'integration_create', entityType: 'integration', entityId: row.id, after: describe(row) });
          return toView(row);
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw new Conflict(INTEGRATION_EXISTS);
        throw error;
      }
    },

    /** Key by key: a value replaces, null removes, a key not sent is kept (spec, Integrations). */
    async update(actor: Actor, type: IntegrationType, body: IntegrationUpdate): Promise<IntegrationView> {
      return db.transaction(async (tx) => {
        const row = await locked(tx, type);
        const patch = body.encrypted_config ?? {};
        const isActive = body.is_active ?? row.isActive;
        if (Object.keys(patch).length === 0 && isActive === row.isActive) return toView(row);

        let stored = openSecrets(row);
        if (stored === undefined) {
          // Unreadable secrets (the key changed) can only be replaced, never merged into.
          if (!row.secretNames.every((name) => name in patch)) throw new Conflict(SECRETS_UNREADABLE);
          stored = {};
        }
        const config: Record<string, string> = { ...row.publicConfig, ...stored };
        for (const [key, value] of Object.entries(patch)) {
          if (value === null) delete config[key];
          else config[key] = value;
        }
        assertRequiredKeys(type, config, ['body', 'encrypted_config']);
        const updated = await store.updateIntegration(tx, row.id, { isActive, ...storedForm(type, config), updatedAt: clock.now() });
        await audit.record(tx, actor, {
          action: 'integration_update',
          entityType: 'integration',
          entityId: row.id,
          before: describe(row),
          after: describe(updated),
          details: {
            keys_set: Object.keys(patch).filter((k) => patch[k] !== null).sort(),
            keys_removed: Object.keys(patch).filter((k) => patch[k] === null).sort(),
          },
        });
        return toView(updated);
      });
    },

    async delete(actor: Actor, type: IntegrationType): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await locked(tx, type);
        await store.deleteIntegration(tx, row.id);
        await audit.record(tx, actor, { action: 'integration_delete', entityType: 'integration', entityId: row.id, before: describe(row) });
      });
    },

    /**
     * Verifies and acknowledges an inbound webhook. Every refusal is the same 401 whatever the reason (missing or
     * inactive integration, no webhook_secret, wrong or missing signature), so a caller learns nothing about the
     * configuration; the reason goes to the log. Only after authentication is the body looked at. Nothing acts on
     * a delivery yet, so nothing in the platform changes.
     */
    async receive(type: IntegrationType, delivery: Delivery, log: DeliveryLog): Promise<{ status: 'received' }> {
      const refuse = (reason: string) => {
        log.info({ integration_type: type, reason }, 'webhook refused');
        return new DomainError(401, WEBHOOK_AUTH_FAILED);
      };
      const row = await store.findIntegration(db, type);
      if (!row || !row.isActive) throw refuse(row ? 'integration inactive' : 'no integration');
      const stored = openSecrets(row);
      if (stored === undefined) {
        log.warn({ integration_type: type }, 'integration secrets cannot be decrypted with the configured key');
        throw refuse('secrets unreadable');
      }
      const secret = stored.webhook_secret;
      if (!secret) throw refuse('no webhook_secret');
      const authentic = type === 'github'
        ? hubSignatureMatches(secret, delivery.rawBody, header(delivery, 'x-hub-signature-256'))
        : sharedSecretMatches(secret, header(delivery, 'x-webhook-secret'));
      if (!authentic) throw refuse('signature mismatch');

      if (!isJsonObject(delivery.rawBody)) throw new BadRequest(INVALID_JSON_PAYLOAD);
      log.info(
        { integration_type: type, event: header(delivery, 'x-github-event'), delivery: header(delivery, 'x-github-delivery') },
        'webhook received',
      );
      return { status: 'received' };
    },
  };
}

/** Whether the body is a JSON object (not broken JSON, an array, a scalar or absurdly nested). */
function isJsonObject(raw: Buffer): boolean {
  const text = raw.toString('utf8');
  if (exceedsDepth(text, MAX_JSON_DEPTH)) return false;
  try {
    const value: unknown = secureJson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
}
