import type { Role } from '../../../platform/roles.js';

/** Highest first: a member of several mapped groups gets the highest of their roles. */
const RANK: readonly Role[] = ['ADMIN', 'DEVELOPER', 'ANALYST', 'VIEWER'];

export interface GroupRoleRules {
  groupRoles: Record<string, Role>;
  adminGroups: readonly string[];
}

/**
 * Spec, Authentication 5: membership of an admin group gives superuser and ADMIN; otherwise the highest mapped role;
 * no mapped group gives VIEWER. Group names match case-sensitively, as the provider spells them.
 */
export function rolesFromGroups(groups: readonly string[], rules: GroupRoleRules): { role: Role; isSuperuser: boolean } {
  if (groups.some((g) => rules.adminGroups.includes(g))) return { role: 'ADMIN', isSuperuser: true };
  const mapped = groups.flatMap((g) => (Object.hasOwn(rules.groupRoles, g) ? [rules.groupRoles[g]] : []));
  const role = RANK.find((r) => mapped.includes(r)) ?? 'VIEWER';
  return { role, isSuperuser: false };
}

/** The token's `cognito:groups` claim: absent (or not a list) means no groups. */
export function groupsClaim(payload: Record<string, unknown>): string[] {
  const claim = payload['cognito:groups'];
  return Array.isArray(claim) ? claim.filter((g): g is string => typeof g === 'string') : [];
}
