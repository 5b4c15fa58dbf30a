import { sql } from 'drizzle-orm';
import { boolean, check, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.js';

/** Optional modules (full profile): custom roles, direct permission grants and integrations. */

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

export const INTEGRATION_TYPES = ['jira', 'salesforce', 'github'] as const;
export type IntegrationType = (typeof INTEGRATION_TYPES)[number];

/**
 * One row per integration type. Non-secret configuration keys are stored as they are; every other key's value
 * lives only in `encrypted_secrets` (AES-256-GCM), and `secret_names` lists those keys so reads never decrypt.
 */
export const integrations = pgTable(
  'integrations',
  {
    id: uuid().primaryKey(),
    integrationType: text().$type<IntegrationType>().notNull(),
    isActive: boolean().notNull().default(false),
    publicConfig: jsonb().$type<Record<string, string>>().notNull().default({}),
    secretNames: jsonb().$type<string[]>().notNull().default([]),
    encryptedSecrets: text(),
    lastSyncAt: timestamp({ withTimezone: true }),
    lastError: text(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('integrations_type_key').on(t.integrationType),
    check('integrations_type_check', sql`${t.integrationType} IN ('jira', 'salesforce', 'github')`),
  ],
);
export type IntegrationRow = typeof integrations.$inferSelect;
