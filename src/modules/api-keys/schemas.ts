import { Type, type Static } from 'typebox';
import { API_SCOPES } from '../../platform/auth.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

export const ApiKeyCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    scopes: Type.Optional(Type.Array(StringEnum(API_SCOPES), { maxItems: 10, uniqueItems: true, default: [] })),
    expires_at: Type.Optional(DateTime({ description: 'When the key stops working (must be in the future); absent: never' })),
    environment: Type.Optional(Type.String({
      minLength: 1, maxLength: 64, pattern: '^[a-z0-9_-]{1,64}$',
      description: 'The environment the key belongs to: every evaluation with it answers there (absent: the default environment; unknown: 422)',
    })),
  },
  { additionalProperties: false, examples: [{ name: 'web-shop backend', scopes: ['sdk:ruleset'], expires_at: '2027-01-01T00:00:00Z' }] },
);
export type ApiKeyCreate = Static<typeof ApiKeyCreate>;

export const ApiKeyView = Type.Object({
  id: Uuid(),
  name: Type.String(),
  key_prefix: Type.String({ description: 'The first characters of the key, to recognise it' }),
  scopes: Type.Array(Type.String()),
  user_id: Uuid(),
  created_at: DateTime(),
  expires_at: Nullable(DateTime({ description: 'When the key stops working; null: never' })),
  last_used_at: Nullable(DateTime({ description: 'When the key last authenticated, to within a minute; null: never used' })),
  environment: Type.String({ description: 'The environment the key belongs to' }),
});
export type ApiKeyView = Static<typeof ApiKeyView>;

export const ApiKeyCreated = Type.Object({
  ...ApiKeyView.properties,
  key: Type.String({ description: 'The full key: returned only by this response' }),
});

export const ApiKeyListQuery = Type.Object({
  all: Type.Boolean({ default: false, description: "true lists every account's keys (ADMIN)" }),
});
export const ApiKeyParams = Type.Object({ key_id: Uuid() });
