import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { CustomRoleRow } from '../../db/schema/rbac.js';
import type { AuditLog } from '../../platform/audit.js';
import { hasRole, type Actor } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { BadRequest, Conflict, Forbidden, NOT_ENOUGH_PERMISSIONS, NotFound } from '../../platform/errors.js';
import { USER_NOT_FOUND, type UsersService } from '../users/service.js';
import { BASE_ROLE_PERMISSIONS, grantIsValid, normalisePermissions, unionPermissions } from './permissions.js';
import type { EffectivePermissions, GrantCreate, RoleAssignment, RoleCreate, RoleUpdate, RoleView } from './schemas.js';
import * as store from './store.js';
import { FOREIGN_KEY_VIOLATION, isUniqueViolation, sqlState } from '../../db/errors.js';

export const ROLE_NOT_FOUND = 'Role not found';
export const ROLE_NAME_TAKEN = 'A role with this name already exists';
export const SYSTEM_ROLE_NOT_MODIFIABLE = 'System roles cannot be modified';
export const SYSTEM_ROLE_NOT_DELETABLE = 'System roles cannot be deleted';
export const ROLE_NOT_ASSIGNED = 'This role is not assigned to the user';
export const GRANT_USER_MISMATCH = 'user_id in the body does not match the user in the path';

export interface RbacDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  users: Pick<UsersService, 'get'>;
}

export type RbacService = ReturnType<typeof createRbacService>;

function toRoleView(row: CustomRoleRow, userCount: number): RoleView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    is_system_role: row.isSystemRole,
    permissions: row.permissions,
    created_at: row.createdAt.toISOString(),
    user_count: userCount,
  };
}

/** The audit trail names who acted; custom roles and grants are changes like any other (core rule on audit logs). */
const who = (actor: Actor) => ({ id: actor.id, username: actor.username });

export function createRbacService(deps: RbacDeps) {
  const { db, audit, clock, users } = deps;

  /** A user removed between the existence check and the write surfaces as a foreign-key violation: still a 404. */
  async function forExistingUser<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw new NotFound(USER_NOT_FOUND);
      throw error;
    }
  }

  return {
    async list(includeSystem: boolean): Promise<RoleView[]> {
      return (await store.listRoles(db, includeSystem)).map((row) => toRoleView(row, row.userCount));
    },

    async get(name: string): Promise<RoleView> {
      const row = await store.findRoleByName(db, name);
      if (!row) throw new NotFound(ROLE_NOT_FOUND);
      return toRoleView(row, row.userCount);
    },

    async create(actor: Actor, body: RoleCreate): Promise<RoleView> {
      try {
        return await db.transaction(async (tx) => {
          if (await store.findRoleByName(tx, body.name)) throw new Conflict(ROLE_NAME_TAKEN);
          const now = clock.now();
          const row = await store.insertRole(tx, {
            id: randomUUID(),
            name: body.name,
            description: body.description ?? null,
            isSystemRole: false,
            permissions: normalisePermissions(body.permissions),
            createdById: actor.id,
            createdAt: now,
            updatedAt: now,
          });
          await audit.record(tx, who(actor), {
            action: 'custom_role_create',
            entityType: 'custom_role',
            entityId: row.id,
            after: { name: row.name, description: row.description, permissions: row.permissions },
          });
          return toRoleView(row, 0);
        });
      } catch (error) {
        // Two concurrent creates of one name: the unique index decides, the loser gets the same 409.
        if (isUniqueViolation(error)) throw new Conflict(ROLE_NAME_TAKEN);
        throw error;
      }
    },

    async update(actor: Actor, name: string, body: RoleUpdate): Promise<RoleView> {
      return db.transaction(async (tx) => {
        const role = await store.lockRoleByName(tx, name);
        if (!role) throw new NotFound(ROLE_NOT_FOUND);
        if (role.isSystemRole) throw new BadRequest(SYSTEM_ROLE_NOT_MODIFIABLE);
        const values: Partial<CustomRoleRow> = {};
        if (body.description !== undefined) values.description = body.description;
        if (body.permissions !== undefined) values.permissions = normalisePermissions(body.permissions);
        const count = await store.countRoleUsers(tx, role.id);
        if (Object.keys(values).length === 0) return toRoleView(role, count);
        const updated = await store.updateRole(tx, role.id, { ...values, updatedAt: clock.now() });
        await audit.record(tx, who(actor), {
          action: 'custom_role_update',
          entityType: 'custom_role',
          entityId: role.id,
          before: { name: role.name, description: role.description, permissions: role.permissions },
          after: { name: updated.name, description: updated.description, permissions: updated.permissions },
        });
        return toRoleView(updated, count);
      });
    },

    async delete(actor: Actor, name: string): Promise<void> {
      await db.transaction(async (tx) => {
        const role = await store.lockRoleByName(tx, name);
        if (!role) throw new NotFound(ROLE_NOT_FOUND);
        if (role.isSystemRole) throw new BadRequest(SYSTEM_ROLE_NOT_DELETABLE);
        const count = await store.countRoleUsers(tx, role.id);
        await store.deleteRole(tx, role.id);
        await audit.record(tx, who(actor), {
          action: 'custom_role_delete',
          entityType: 'custom_role',
          entityId: role.id,
          before: { name: role.name, description: role.description, permissions: role.permissions, user_count: count },
        });
      });
    },

    /** Idempotent: assigning a role the user already has answers the same and records nothing new. */
    async assign(actor: Actor, body: RoleAssignment) {
      await users.get(body.user_id);
      await forExistingUser(() =>
        db.transaction(async (tx) => {
          const role = await store.lockRoleByName(tx, body.role_name);
          if (!role) throw new NotFound(ROLE_NOT_FOUND);
          const added = await store.insertAssignmentIfAbsent(tx, {
            id: randomUUID(),
            userId: body.user_id,
            roleId: role.id,
            assignedById: actor.id,
            reason: body.reason ?? null,
            assignedAt: clock.now(),
          });
          if (!added) return;
          await audit.record(tx, who(actor), {
            action: 'custom_role_assign',
            entityType: 'user',
            entityId: body.user_id,
            after: { role: role.name },
            details: { reason: body.reason ?? null },
          });
        }),
      );
      return { status: 'assigned' as const, user_id: body.user_id, role: body.role_name };
    },

    async revoke(actor: Actor, body: RoleAssignment) {
      await users.get(body.user_id);
      await db.transaction(async (tx) => {
        const role = await store.lockRoleByName(tx, body.role_name);
        if (!role) throw new NotFound(ROLE_NOT_FOUND);
        if (!(await store.deleteAssignment(tx, body.user_id, role.id))) throw new NotFound(ROLE_NOT_ASSIGNED);
        await audit.record(tx, who(actor), {
          action: 'custom_role_revoke',
          entityType: 'user',
          entityId: body.user_id,
          before: { role: role.name },
          details: { reason: body.reason ?? null },
        });
      });
      return { status: 'revoked' as const, user_id: body.user_id, role: body.role_name };
    },

    /** Self, or ADMIN (a superuser counts as ADMIN) for anyone; others learn nothing about whether the user exists. */
    async effectivePermissions(actor: Actor, userId: string): Promise<EffectivePermissions> {
      if (actor.id !== userId && !hasRole(actor, 'ADMIN')) throw new Forbidden(NOT_ENOUGH_PERMISSIONS);
      const user = await users.get(userId);
      const [roles, grants] = await Promise.all([store.rolesOfUser(db, userId), store.grantsOfUser(db, userId)]);
      const now = clock.now();
      const permissions = unionPermissions([
        user.role ? BASE_ROLE_PERMISSIONS[user.role] : [],
        ...roles.map((r) => r.permissions),
        grants.filter((g) => grantIsValid(g, now)),
      ]);
      return {
        user_id: user.id,
        username: user.username,
        base_role: user.role ? (user.role.toLowerCase() as EffectivePermissions['base_role']) : null,
        custom_roles: roles.map((r) => r.name),
        permissions,
        is_superuser: user.is_superuser,
      };
    },

    async grant(actor: Actor, userId: string, body: GrantCreate) {
      if (body.user_id !== undefined && body.user_id !== userId) throw new BadRequest(GRANT_USER_MISMATCH);
      await users.get(userId);
      const actions = [...new Set(body.actions)].sort();
      const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
      await forExistingUser(() =>
        db.transaction(async (tx) => {
          const row = await store.insertGrant(tx, {
            id: randomUUID(),
            userId,
            resource: body.resource,
            actions,
            grantedById: actor.id,
            reason: body.reason ?? null,
            expiresAt,
            isActive: true,
            createdAt: clock.now(),
          });
          await audit.record(tx, who(actor), {
            action: 'permission_grant',
            entityType: 'user',
            entityId: userId,
            after: { grant_id: row.id, resource: row.resource, actions, expires_at: expiresAt?.toISOString() ?? null },
            details: { reason: row.reason },
          });
        }),
      );
      return { status: 'granted' as const, user_id: userId, resource: body.resource, actions };
    },

    /** Deletes every grant of the user for the resource; the count says how many there were (0 is not an error). */
    async revokeGrants(actor: Actor, userId: string, resource: string) {
      await users.get(userId);
      const count = await db.transaction(async (tx) => {
        const deleted = await store.deleteGrants(tx, userId, resource);
        if (deleted.length > 0) {
          await audit.record(tx, who(actor), {
            action: 'permission_revoke',
            entityType: 'user',
            entityId: userId,
            before: { resource, grants: deleted.map((g) => ({ id: g.id, actions: g.actions, expires_at: g.expiresAt?.toISOString() ?? null })) },
          });
        }
        return deleted.length;
      });
      return { status: 'revoked' as const, count };
    },
  };
}
