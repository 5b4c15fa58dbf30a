import type { Db } from '../../db/client.js';
import type { UsersService } from '../users/service.js';
import type { WorkspaceView } from './schemas.js';
import * as store from './store.js';

export type WorkspacesService = ReturnType<typeof createWorkspacesService>;

/**
 * Workspaces. This release has one, the default workspace created by the migration, and every account is a member
 * of it; there are no per-workspace memberships yet, so its member_count is the number of accounts.
 */
export function createWorkspacesService(deps: { db: Db; users: UsersService }) {
  return {
    async list(): Promise<WorkspaceView[]> {
      const [rows, accounts] = await Promise.all([store.listWorkspaces(deps.db), deps.users.adminList(undefined, 0, 1)]);
      return rows.map((row) => ({
        id: row.id,
        name: row.name,
        slug: row.slug,
        is_default: row.isDefault,
        member_count: row.isDefault ? accounts.total : 0,
        created_at: row.createdAt.toISOString(),
      }));
    },
  };
}
