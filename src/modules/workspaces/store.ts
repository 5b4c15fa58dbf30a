import { asc, desc } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { workspaces, type WorkspaceRow } from '../../db/schema/workspaces.js';

export function listWorkspaces(db: Executor): Promise<WorkspaceRow[]> {
  return db.select().from(workspaces).orderBy(desc(workspaces.isDefault), asc(workspaces.name), asc(workspaces.id));
}
