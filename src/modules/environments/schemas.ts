import { Type, type Static } from 'typebox';
import { DateTime, Nullable } from '../../platform/schemas.js';

export const ENVIRONMENT_KEY_PATTERN = '^[a-z0-9_-]{1,64}$';
export const EnvironmentKey = (options: Record<string, unknown> = {}) =>
  Type.String({ minLength: 1, maxLength: 64, pattern: ENVIRONMENT_KEY_PATTERN, ...options });
const Color = Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: 'A CSS hex colour, #rrggbb' });
const SortOrder = Type.Integer({ minimum: -1_000_000, maximum: 1_000_000, description: 'Lower first in lists' });

export const EnvironmentCreate = Type.Object(
  {
    key: EnvironmentKey({ description: '1 to 64 of a-z, 0-9, - and _; never changes' }),
    name: Type.String({ minLength: 1, maxLength: 255 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    color: Type.Optional(Nullable(Color)),
    sort_order: Type.Optional(SortOrder),
    is_default: Type.Optional(Type.Boolean({ description: 'true makes it the default environment (the previous default stops being it)' })),
    copy_from: Type.Optional(EnvironmentKey({ description: "Copy every flag's state from this environment; absent: every flag starts off" })),
  },
  { additionalProperties: false, examples: [{ key: 'staging', name: 'Staging', color: '#f59e0b', sort_order: 10, copy_from: 'production' }] },
);
export type EnvironmentCreate = Static<typeof EnvironmentCreate>;

export const EnvironmentUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    color: Type.Optional(Nullable(Color)),
    sort_order: Type.Optional(SortOrder),
    is_default: Type.Optional(Type.Boolean({ description: 'true makes this the default (one atomic change); false on the default is 409' })),
  },
  { additionalProperties: false, examples: [{ is_default: true }] },
);
export type EnvironmentUpdate = Static<typeof EnvironmentUpdate>;

export const EnvironmentView = Type.Object({
  key: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  color: Nullable(Type.String()),
  sort_order: Type.Integer(),
  is_default: Type.Boolean(),
  created_at: DateTime(),
});
export type EnvironmentView = Static<typeof EnvironmentView>;

export const EnvironmentParams = Type.Object({ key: EnvironmentKey() });
