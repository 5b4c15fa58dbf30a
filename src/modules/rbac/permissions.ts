import type { Role } from '../../platform/roles.js';

/**
 * Custom roles are stored and displayed only (spec "What the service does", 1): nothing here is consulted by an
 * access check. Routes are guarded by the base role and the superuser flag alone (platform/auth.ts).
 */
export const RESOURCES = ['experiment', 'feature_flag', 'user', 'role', 'permission', 'report', 'audit_log', 'export'] as const;
export const ACTIONS = ['create', 'read', 'update', 'delete', 'list'] as const;
export type Resource = (typeof RESOURCES)[number];
export type Action = (typeof ACTIONS)[number];

export interface Permission {
  resource: string;
  actions: string[];
}

const ALL: Action[] = [...ACTIONS];
const READ: Action[] = ['list', 'read'];

/** What each base role's routes let it do, described in the custom-role vocabulary for display. */
export const BASE_ROLE_PERMISSIONS: Record<Role, Permission[]> = {
  ADMIN: RESOURCES.map((resource) => ({ resource, actions: ALL })),
  DEVELOPER: [
    { resource: 'experiment', actions: ALL },
    { resource: 'feature_flag', actions: ALL },
    { resource: 'report', actions: ['create', ...READ] },
    { resource: 'export', actions: ['read'] },
  ],
  ANALYST: [
    { resource: 'experiment', actions: READ },
    { resource: 'feature_flag', actions: READ },
    { resource: 'report', actions: ['create', ...READ] },
    { resource: 'audit_log', actions: READ },
    { resource: 'export', actions: ['read'] },
  ],
  VIEWER: [
    { resource: 'experiment', actions: READ },
    { resource: 'feature_flag', actions: READ },
    { resource: 'report', actions: READ },
    { resource: 'export', actions: ['read'] },
  ],
};

/** Merges entries for the same resource and sorts resources and actions, so a role reads the same however sent. */
export function normalisePermissions(permissions: readonly Permission[]): Permission[] {
  return Object.entries(unionPermissions([permissions])).map(([resource, actions]) => ({ resource, actions }));
}

/** Permissions are additive (there is no deny): the union of every layer, resources and actions sorted. */
export function unionPermissions(layers: ReadonlyArray<readonly Permission[]>): Record<string, string[]> {
  const byResource = new Map<string, Set<string>>();
  for (const layer of layers) {
    for (const { resource, actions } of layer) {
      const set = byResource.get(resource) ?? new Set<string>();
      for (const action of actions) set.add(action);
      byResource.set(resource, set);
    }
  }
  const out: Record<string, string[]> = {};
  for (const resource of [...byResource.keys()].sort()) out[resource] = [...byResource.get(resource)!].sort();
  return out;
}

/** Spec "Direct grant": included while is_active and expires_at is null or in the future. */
export function grantIsValid(grant: { isActive: boolean; expiresAt: Date | null }, now: Date): boolean {
  return grant.isActive && (grant.expiresAt === null || grant.expiresAt.getTime() > now.getTime());
}
