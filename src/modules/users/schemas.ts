import { Type, type Static } from 'typebox';
import { ROLES } from '../../platform/roles.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

const Username = Type.String({ minLength: 1, maxLength: 100, pattern: '^\\S(.*\\S)?$' });
const Email = Type.String({ format: 'email', maxLength: 255 });
const FullName = Type.String({ maxLength: 255 });
const Password = Type.String({ minLength: 1, maxLength: 1024, description: 'At least 8 characters, at most 72 bytes, upper- and lower-case letter and digit' });

export const UserView = Type.Object({
  id: Uuid(),
  username: Type.String(),
  email: Nullable(Type.String()),
  full_name: Nullable(Type.String()),
  role: Nullable(StringEnum(ROLES)),
  is_active: Type.Boolean(),
  is_superuser: Type.Boolean(),
  last_login: Nullable(DateTime()),
  preferences: Nullable(Type.Object({}, { additionalProperties: true })),
  external_id: Nullable(Type.String()),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export type UserView = Static<typeof UserView>;

export const UserIdParams = Type.Object({ user_id: Uuid() });

export const UserCreate = Type.Object(
  {
    username: Username,
    email: Email,
    password: Password,
    full_name: Type.Optional(Nullable(FullName)),
    is_active: Type.Optional(Type.Boolean({ default: true })),
    is_superuser: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false, examples: [
    {
      username: 'jane.doe',
      email: 'jane.doe@example.com',
      password: 'Str0ngPassw0rd',
      full_name: 'Jane Doe',
      is_active: true,
      is_superuser: false,
    },
  ] },
);
export type UserCreate = Static<typeof UserCreate>;

/** PUT /users/{id} and PUT /admin/users/{id}: username and email required; omitting or nulling password keeps it. */
export const UserReplace = Type.Object(
  {
    username: Username,
    email: Email,
    full_name: Type.Optional(Nullable(FullName)),
    is_active: Type.Optional(Type.Boolean()),
    is_superuser: Type.Optional(Type.Boolean()),
    password: Type.Optional(Nullable(Password)),
  },
  { additionalProperties: false, examples: [
    { username: 'jane.doe', email: 'jane.doe@example.com', full_name: 'Jane Doe', is_active: true },
  ] },
);
export type UserReplace = Static<typeof UserReplace>;

/** PATCH /admin/users/{id}: any subset, including the role. */
export const UserPatch = Type.Object(
  {
    username: Type.Optional(Username),
    email: Type.Optional(Email),
    full_name: Type.Optional(Nullable(FullName)),
    role: Type.Optional(StringEnum(ROLES)),
    is_active: Type.Optional(Type.Boolean()),
    is_superuser: Type.Optional(Type.Boolean()),
    password: Type.Optional(Nullable(Password)),
  },
  { additionalProperties: false, examples: [{ role: 'DEVELOPER', is_active: true }] },
);
export type UserPatch = Static<typeof UserPatch>;

export const PasswordChange = Type.Object(
  {
    current_password: Type.Optional(Type.String({ maxLength: 1024 })),
    new_password: Password,
  },
  { additionalProperties: false, examples: [{ current_password: 'Str0ngPassw0rd', new_password: 'An0therStr0ngOne' }] },
);
export type PasswordChange = Static<typeof PasswordChange>;

export const UserListQuery = Type.Object({
  skip: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 100 }),
});

export const AdminUserListQuery = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 255 })),
  skip: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 100 }),
});

export const AdminUserList = Type.Object({
  items: Type.Array(UserView),
  total: Type.Integer(),
  skip: Type.Integer(),
  limit: Type.Integer(),
});
