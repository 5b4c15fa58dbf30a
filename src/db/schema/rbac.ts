import { boolean, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.js';

/** Custom roles, their assignments and direct permission grants (rbac module, full profile). */

export interface StoredPermission {
  resource: string;
  actions: string[];
}

export const customRoles = pgTable(
  'custom_roles',
  {
    id: uuid().primaryKey(),
    name: text().notNull(),
    description: text(),
    isSystemRole: boolean().notNull().default(false),
    permissions: jsonb().$type<StoredPermission[]>().notNull().default([]),
    createdById: uuid().references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('custom_roles_name_key').on(t.name)],
);
export type CustomRoleRow = typeof customRoles.$inferSelect;

export const userCustomRoles = pgTable(
  'user_custom_roles',
  {
    id: uuid().primaryKey(),
    userId: uuid().notNull().references(() => users.id, { onDelete: 'cascade' }),
    roleId: uuid().notNull().references(() => customRoles.id, { onDelete: 'cascade' }),
    assignedById: uuid().references(() => users.id, { onDelete: 'set null' }),
    reason: text(),
    assignedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('user_custom_roles_user_role_key').on(t.userId, t.roleId), index('user_custom_roles_role_idx').on(t.roleId)],
);

export const directPermissionGrants = pgTable(
  'direct_permission_grants',
  {
    id: uuid().primaryKey(),
    userId: uuid().notNull().references(() => users.id, { onDelete: 'cascade' }),
    resource: text().notNull(),
    actions: jsonb().$type<string[]>().notNull(),
    grantedById: uuid().references(() => users.id, { onDelete: 'set null' }),
    reason: text(),
    expiresAt: timestamp({ withTimezone: true }),
    isActive: boolean().notNull().default(true),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('direct_permission_grants_user_idx').on(t.userId, t.resource)],
);
export type DirectGrantRow = typeof directPermissionGrants.$inferSelect;
