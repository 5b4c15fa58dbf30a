import { Type, type Static } from 'typebox';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';
import { ACTIONS, RESOURCES } from './permissions.js';

const Description = Type.String({ maxLength: 1000 });
const Reason = Type.String({ maxLength: 1000 });
const Actions = Type.Array(StringEnum(ACTIONS), { minItems: 1, maxItems: 20 });

export const RoleName = Type.String({
  minLength: 2,
  maxLength: 64,
  pattern: '^[a-z][a-z0-9_-]*$',
  description: '2 to 64 characters; starts with a lower-case letter; only a-z, 0-9, - and _',
  example: 'release-managers',
});

export const PermissionInput = Type.Object(
  { resource: StringEnum(RESOURCES), actions: Actions },
  { additionalProperties: false },
);

export const RoleCreate = Type.Object(
  {
    name: RoleName,
    description: Type.Optional(Nullable(Description)),
    permissions: Type.Array(PermissionInput, { maxItems: 50 }),
  },
  { additionalProperties: false, examples: [
    {
      name: 'release-manager',
      description: 'Turns flags on and off and reads reports',
      permissions: [
        { resource: 'feature_flag', actions: ['read', 'update'] },
        { resource: 'report', actions: ['read'] },
      ],
    },
  ] },
);
export type RoleCreate = Static<typeof RoleCreate>;

export const RoleUpdate = Type.Object(
  {
    description: Type.Optional(Nullable(Description)),
    permissions: Type.Optional(Type.Array(PermissionInput, { maxItems: 50 })),
  },
  { additionalProperties: false, examples: [
    {
      description: 'Turns flags on and off, reads reports and exports',
      permissions: [
        { resource: 'feature_flag', actions: ['read', 'update'] },
        { resource: 'export', actions: ['read'] },
      ],
    },
  ] },
);
export type RoleUpdate = Static<typeof RoleUpdate>;

export const PermissionView = Type.Object({ resource: Type.String(), actions: Type.Array(Type.String()) });

export const RoleView = Type.Object({
  id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  is_system_role: Type.Boolean(),
  permissions: Type.Array(PermissionView),
  created_at: DateTime(),
  user_count: Type.Integer(),
});
export type RoleView = Static<typeof RoleView>;

export const RoleListQuery = Type.Object({
  include_system: Type.Boolean({ default: true, description: 'false leaves out system roles' }),
});
export const RoleParams = Type.Object({ role_name: Type.String({ maxLength: 255 }) });

export const RoleAssignment = Type.Object(
  { user_id: Uuid(), role_name: Type.String({ minLength: 1, maxLength: 255 }), reason: Type.Optional(Nullable(Reason)) },
  { additionalProperties: false, examples: [
    {
      user_id: '5e8a1c3d-7b9f-4a2e-8c6d-0b4f2e1a9c37',
      role_name: 'release-manager',
      reason: 'Owns the March release',
    },
  ] },
);
export type RoleAssignment = Static<typeof RoleAssignment>;

export const AssignResult = Type.Object({ status: Type.Literal('assigned'), user_id: Uuid(), role: Type.String() });
export const RevokeResult = Type.Object({ status: Type.Literal('revoked'), user_id: Uuid(), role: Type.String() });

export const UserParams = Type.Object({ user_id: Uuid() });
export const GrantParams = Type.Object({ user_id: Uuid(), resource: Type.String({ maxLength: 255 }) });

export const EffectivePermissions = Type.Object({
  user_id: Uuid(),
  username: Type.String(),
  base_role: Nullable(StringEnum(['admin', 'developer', 'analyst', 'viewer'])),
  custom_roles: Type.Array(Type.String(), { description: 'Names of the assigned custom roles, sorted' }),
  permissions: Type.Record(Type.String(), Type.Array(Type.String()), {
    description: 'Resource mapped to its actions, both sorted alphabetically (display only: nothing enforces them)',
  }),
  is_superuser: Type.Boolean(),
});
export type EffectivePermissions = Static<typeof EffectivePermissions>;

export const GrantCreate = Type.Object(
  {
    user_id: Type.Optional(Uuid({ description: 'When sent, must equal the path user_id' })),
    resource: StringEnum(RESOURCES),
    actions: Actions,
    reason: Type.Optional(Nullable(Reason)),
    expires_at: Type.Optional(Nullable(DateTime({ description: 'Omitted or null: never expires' }))),
  },
  { additionalProperties: false, examples: [
    {
      user_id: '5e8a1c3d-7b9f-4a2e-8c6d-0b4f2e1a9c37',
      resource: 'export',
      actions: ['read'],
      reason: 'Quarterly audit',
      expires_at: '2027-04-01T00:00:00Z',
    },
  ] },
);
export type GrantCreate = Static<typeof GrantCreate>;

export const GrantResult = Type.Object({
  status: Type.Literal('granted'),
  user_id: Uuid(),
  resource: Type.String(),
  actions: Type.Array(Type.String()),
});
export const GrantRevokeResult = Type.Object({
  status: Type.Literal('revoked'),
  count: Type.Integer({ description: 'Grant records deleted: every grant of that user for that resource' }),
});
