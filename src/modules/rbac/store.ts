import { and, asc, eq, getTableColumns, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import {
  customRoles,
  directPermissionGrants,
  userCustomRoles,
  type CustomRoleRow,
  type DirectGrantRow,
} from '../../db/schema/rbac.js';

export type RoleWithCount = CustomRoleRow & { userCount: number };

// Written out with table names: Drizzle leaves columns unqualified in single-table selects, which would make the
// correlated subquery compare user_custom_roles with itself.
const userCount = sql<number>`(SELECT count(*)::int FROM user_custom_roles u WHERE u.role_id = custom_roles.id)`;

export function listRoles(db: Executor, includeSystem: boolean): Promise<RoleWithCount[]> {
  return db
    .select({ ...getTableColumns(customRoles), userCount })
    .from(customRoles)
    .where(includeSystem ? undefined : eq(customRoles.isSystemRole, false))
    .orderBy(asc(customRoles.name));
}

export async function findRoleByName(db: Executor, name: string): Promise<RoleWithCount | undefined> {
  const [row] = await db.select({ ...getTableColumns(customRoles), userCount }).from(customRoles).where(eq(customRoles.name, name));
  return row;
}

/** The role locked against concurrent edits and deletion for the rest of the transaction. */
export async function lockRoleByName(db: Executor, name: string): Promise<CustomRoleRow | undefined> {
  const [row] = await db.select().from(customRoles).where(eq(customRoles.name, name)).for('update');
  return row;
}

export async function insertRole(db: Executor, values: typeof customRoles.$inferInsert): Promise<CustomRoleRow> {
  const [row] = await db.insert(customRoles).values(values).returning();
  return row;
}

export async function updateRole(db: Executor, id: string, values: Partial<typeof customRoles.$inferInsert>): Promise<CustomRoleRow> {
  const [row] = await db.update(customRoles).set(values).where(eq(customRoles.id, id)).returning();
  return row;
}

export async function deleteRole(db: Executor, id: string): Promise<void> {
  await db.delete(customRoles).where(eq(customRoles.id, id));
}

export async function countRoleUsers(db: Executor, roleId: string): Promise<number> {
  const [{ count }] = await db.select({ count: sql<number>`count(*)::int` }).from(userCustomRoles).where(eq(userCustomRoles.roleId, roleId));
  return count;
}

/** Inserts the assignment unless the user already has the role; true when a row was added. */
export async function insertAssignmentIfAbsent(db: Executor, values: typeof userCustomRoles.$inferInsert): Promise<boolean> {
  const rows = await db.insert(userCustomRoles).values(values).onConflictDoNothing().returning({ id: userCustomRoles.id });
  return rows.length > 0;
}

export async function deleteAssignment(db: Executor, userId: string, roleId: string): Promise<boolean> {
  const rows = await db
    .delete(userCustomRoles)
    .where(and(eq(userCustomRoles.userId, userId), eq(userCustomRoles.roleId, roleId)))
    .returning({ id: userCustomRoles.id });
  return rows.length > 0;
}

export function rolesOfUser(db: Executor, userId: string): Promise<CustomRoleRow[]> {
  return db
    .select(getTableColumns(customRoles))
    .from(userCustomRoles)
    .innerJoin(customRoles, eq(customRoles.id, userCustomRoles.roleId))
    .where(eq(userCustomRoles.userId, userId))
    .orderBy(asc(customRoles.name));
}

export async function insertGrant(db: Executor, values: typeof directPermissionGrants.$inferInsert): Promise<DirectGrantRow> {
  const [row] = await db.insert(directPermissionGrants).values(values).returning();
  return row;
}

export function grantsOfUser(db: Executor, userId: string): Promise<DirectGrantRow[]> {
  return db.select().from(directPermissionGrants).where(eq(directPermissionGrants.userId, userId));
}

export function deleteGrants(db: Executor, userId: string, resource: string): Promise<DirectGrantRow[]> {
  return db
    .delete(directPermissionGrants)
    .where(and(eq(directPermissionGrants.userId, userId), eq(directPermissionGrants.resource, resource)))
    .returning();
}
