import { Type, type Static } from 'typebox';
import { INTEGRATION_TYPES } from '../../db/schema/integrations.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

/** The only configuration keys ever shown; every other key is a secret whose value is never returned. */
export const PUBLIC_CONFIG_KEYS = ['base_url', 'email', 'project_key', 'instance_url', 'client_id', 'repo_owner', 'repo_name'] as const;

const KEY_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';
const Value = Type.String({ maxLength: 4096 });

const EXAMPLE = { repo_owner: 'acme', repo_name: 'shop', webhook_secret: 's3cret', token: 'ghp_example' };
const ConfigKey = Type.String({ pattern: KEY_PATTERN });
const configOptions = (description: string) => ({ additionalProperties: false, maxProperties: 50, description, example: EXAMPLE });

export const IntegrationTypeParams = Type.Object({ integration_type: StringEnum(INTEGRATION_TYPES) });

export const IntegrationCreate = Type.Object(
  {
    integration_type: StringEnum(INTEGRATION_TYPES),
    is_active: Type.Boolean({ default: false, description: 'Only an active integration answers webhooks' }),
    encrypted_config: Type.Optional(
      Type.Record(ConfigKey, Value, { ...configOptions('Configuration keys; github needs repo_owner, repo_name and webhook_secret (token optional)'), default: {} }),
    ),
  },
  { additionalProperties: false, examples: [
    {
      integration_type: 'github',
      is_active: true,
      encrypted_config: { repo_owner: 'acme', repo_name: 'shop', webhook_secret: 'whsec-4f9a2c7e1b' },
    },
  ] },
);
export type IntegrationCreate = Static<typeof IntegrationCreate>;

export const IntegrationUpdate = Type.Object(
  {
    is_active: Type.Optional(Type.Boolean()),
    encrypted_config: Type.Optional(
      Type.Record(ConfigKey, Nullable(Value), configOptions('Merged key by key: a value replaces, null removes, a key not sent is kept')),
    ),
  },
  { additionalProperties: false, examples: [
    { is_active: true, encrypted_config: { webhook_secret: 'whsec-8d3b6e0a2f', token: null } },
  ] },
);
export type IntegrationUpdate = Static<typeof IntegrationUpdate>;

export const IntegrationView = Type.Object({
  id: Uuid(),
  integration_type: StringEnum(INTEGRATION_TYPES),
  is_active: Type.Boolean(),
  encrypted_config: Type.Record(Type.String(), Type.String(), { description: `Only the non-secret keys: ${PUBLIC_CONFIG_KEYS.join(', ')}` }),
  stored_secrets: Type.Array(Type.String(), { description: 'Names of the other stored keys; their values are never returned' }),
  last_sync_at: Nullable(DateTime()),
  last_error: Nullable(Type.String()),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export type IntegrationView = Static<typeof IntegrationView>;

export const WebhookReceived = Type.Object({ status: Type.Literal('received') });
