import type { Db } from '../../db/client.js';
import type { CreatedPeriod } from '../../db/paging.js';
import * as armStats from './arm-stats.js';
import { ensureEventPartitions, summarizeEventRanges } from './partitions.js';
import * as store from './store.js';

export type { AssignmentOverlap } from './store.js';
export type {
  CellStats, ConflictingExposure, CovariateKind, CreatedWindow, DeltaScope, EventCountStats, GroupUserValues, GuardrailCounts, GuardrailValueWindows,
  GuardrailWindows, UserRange, UserTotals, WindowUserTotal,
  VariantMetricStats,
} from './arm-stats.js';

/**
 * The counting owner's statements (arm-stats.ts), for readers that run them in their own transaction (the results
 * rollup and reads, in one repeatable-read snapshot): each takes the caller's executor first.
 */
export { armStats };
/** Per-user values of definitions with a covariate, by segment and by day (CUPED, segmented and daily results). */
export * as definitionReads from './definition-reads.js';

/**
 * Tracking's stored assignments and events as other modules may use them: counts (bandit, guarded rollouts, interactions, export),
 * samples (segment preview), users seen (holdout), and the detaching of a deleted flag's events. It needs only the
 * database, so it is built before every module that asks, and the loops those modules would otherwise close through
 * the tracking service (which needs them in turn) do not exist.
 */
export type TrackingData = ReturnType<typeof createTrackingData>;

export function createTrackingData(db: Db) {
  return {
    /** For guarded rollouts: guardrail event counts per user of the flag's exposed users and of the baseline. */
    guardrailCounts: (windows: armStats.GuardrailWindows) => armStats.guardrailCounts(db, windows),
    /** For guarded rollouts on metric library definitions: per-user values of the exposed users and of the baseline. */
    guardrailUserValues: (windows: armStats.GuardrailValueWindows) => armStats.guardrailUserValues(db, windows),

    /** For bandit: per-variant analysed users, converters and value sums of one metric event, by the counting rule. */
    variantMetricStats: (experimentId: string, eventName: string) => armStats.variantMetricStats(db, experimentId, eventName),

    /** For interactions: users shared by each pair of the experiments, and assigned users per experiment. */
    assignmentOverlaps: (experimentIds: string[]) => store.assignmentOverlaps(db, experimentIds),
    assignedUsersPerExperiment: (experimentIds: string[]) => store.assignedUsersPerExperiment(db, experimentIds),

    /** For export: per-experiment and per-flag totals, and what was recorded in a period. */
    experimentTotals: (experimentIds: string[]) => store.experimentTotals(db, experimentIds),
    flagEventCounts: (flagIds: string[]) => store.flagEventCounts(db, flagIds),
    periodCounts: (period: CreatedPeriod) => store.periodCounts(db, period),

    /** For holdout results: users seen since a time, with their event names, and the assigned user count. */
    usersSeenSince: (since: Date, limit: number) => store.usersSeenSince(db, since, limit),

    /** For segment preview: recent assignment contexts (each with its user_id). */
    sampleContexts: (limit: number) => store.recentAssignmentContexts(db, limit),

    /** For the flags module: a deleted flag's events are kept, detached from it. */
    detachFlag: (flagId: string) => store.detachFlagEvents(db, flagId),

    /** For the scheduler: monthly event partitions exist ahead of time. */
    ensurePartitions: async (now: Date): Promise<void> => {
      await ensureEventPartitions(db, now);
    },

    /** For the scheduler, before the results rollup: the events' new block ranges are summarized (reads find them). */
    summarizeRanges: async (): Promise<void> => {
      await summarizeEventRanges(db);
    },
  };
}
