/**
 * What tracking tells other modules through the bus: that events or assignments were committed. The results module
 * marks the snapshots of the experiments named stale (docs/statistics.md, "Rollups and caching"); ingestion only
 * publishes, after its group commit, one message per committed batch: no query, nothing awaited by the request.
 */
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';

export const DATA_COMMITTED = 'tracking.data-committed';

/**
 * One committed batch: its commit time (ms since the epoch, the committing process's clock), the experiments whose
 * events or assignments it holds, and `all` when it holds events that count for every experiment their user is in
 * (untagged events carrying a feature flag).
 */
export interface CommitNotice {
  at: number;
  experiments: string[];
  all: boolean;
}

export function parseCommitNotice(message: string): CommitNotice | undefined {
  try {
    const n = JSON.parse(message) as Partial<CommitNotice>;
    if (typeof n.at !== 'number' || !Array.isArray(n.experiments) || typeof n.all !== 'boolean') return undefined;
    return { at: n.at, experiments: n.experiments.filter((x): x is string => typeof x === 'string'), all: n.all };
  } catch {
    return undefined;
  }
}

/** Announces committed batches on the bus (local subscribers hear it before the writes are acknowledged). */
export function commitAnnouncer(bus: Bus, clock: Clock) {
  return (experiments: Iterable<string | null>, all: boolean): void => {
    const ids = [...new Set([...experiments].filter((x): x is string => x !== null))];
    if (ids.length === 0 && !all) return;
    const notice: CommitNotice = { at: clock.now().getTime(), experiments: ids, all };
    // A lost remote copy only delays other processes to RESULTS_MAX_STALENESS_SECONDS.
    void bus.publish(DATA_COMMITTED, JSON.stringify(notice)).catch(() => undefined);
  };
}
export type CommitAnnouncer = ReturnType<typeof commitAnnouncer>;
