import type { Executor } from '../../db/client.js';
import type { RolloutScheduleStatus } from '../../db/schema/rollout-schedules.js';
import { openSchedulesNamingDefinition } from './store.js';

/** A schedule as another module names it in a refusal. */
export interface ScheduleSummary {
  id: string;
  name: string;
  status: RolloutScheduleStatus;
  flag_id: string;
}

/** What other modules read of rollout schedules without the service (the metric library, which the service needs). */
export const rolloutSchedulesReadModel = {
  /**
   * Open schedules (draft, active, paused) with a guardrail naming the metric definition, read in the caller's
   * transaction (the metric library's delete and kind change refuse while there are any).
   */
  schedulesGuardedByMetricDefinition: async (definitionId: string, tx: Executor): Promise<ScheduleSummary[]> =>
    (await openSchedulesNamingDefinition(tx, definitionId)).map((r) => ({ id: r.id, name: r.name, status: r.status, flag_id: r.flagId })),
};
