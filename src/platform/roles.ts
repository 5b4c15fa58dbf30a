/**
 * The four user roles. Access control is the platform's (auth guards, `hasRole`), so the roles live here: the users
 * table (db/schema/users.ts), config (BOOTSTRAP and IdP role settings) and every module import them from this file.
 */
export const ROLES = ['ADMIN', 'DEVELOPER', 'ANALYST', 'VIEWER'] as const;
export type Role = (typeof ROLES)[number];
