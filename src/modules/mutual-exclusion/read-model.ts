import type { Db } from '../../db/client.js';
import type { ExclusionGroup } from './membership.js';
import * as store from './store.js';

/**
 * What other modules read of mutual exclusion groups without the service: it needs only the database, so the
 * experiments module (which the mutual-exclusion service needs to name member experiments) is given it at
 * construction instead of a late-bound loop.
 */
export type MutualExclusionReadModel = ReturnType<typeof createMutualExclusionReadModel>;

export function createMutualExclusionReadModel(db: Db) {
  return {
    /** For assignment: the active group holding the experiment, with members in joining order. */
    async activeGroupOf(experimentId: string): Promise<ExclusionGroup | null> {
      const row = await store.activeGroupOf(db, experimentId);
      if (!row) return null;
      return { id: row.id, experimentIds: (await store.listMembers(db, [row.id])).map((m) => m.experimentId), trafficAllocation: row.trafficAllocation };
    },
  };
}
