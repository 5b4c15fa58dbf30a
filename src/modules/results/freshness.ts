/**
 * Results that keep up with the data (issue 31): which commits of events this process has heard of, per experiment,
 * and the rule for serving a cached snapshot or payload (RESULTS_MAX_STALENESS_SECONDS) or computing it again.
 */
import type { Bus } from '../../platform/bus.js';
import type { Cache } from '../../platform/cache.js';
import type { Clock } from '../../platform/clock.js';
import { DATA_COMMITTED, parseCommitNotice } from '../tracking/domain.js';
import type { AnalysedExperiment } from './experiment.js';

/**
 * A cached snapshot or payload with the time its read of the data began (`read_at`, ms) and the commit time of the
 * newest event it includes, as far as this process heard (`through`, ms; null when it heard of none).
 */
export interface Fresh<T> {
  value: T;
  read_at: number;
  through: number | null;
}

export interface FreshnessDeps {
  bus: Bus;
  clock: Clock;
  cache: Cache;
  maxStalenessSeconds?: number;
  /** How long an experiment's entries are kept in the cache (seconds). */
  ttl(e: AnalysedExperiment): number;
}

export function createFreshness({ bus, clock, cache, maxStalenessSeconds, ttl }: FreshnessDeps) {
/**
 * The newest commit of events or assignments heard of, per experiment, and of untagged flag events (which count for
 * every experiment): tracking announces each committed batch (DATA_COMMITTED), locally before it acknowledges.
 */
const commits = new Map<string, number>();
let commitsForAll = 0;
bus.subscribe(DATA_COMMITTED, (message) => {
  const notice = parseCommitNotice(message);
  if (!notice) return;
  if (notice.all) commitsForAll = Math.max(commitsForAll, notice.at);
  for (const id of notice.experiments) commits.set(id, Math.max(commits.get(id) ?? 0, notice.at));
});
const lastCommit = (id: string): number | null => {
  const at = Math.max(commits.get(id) ?? 0, commitsForAll);
  return at === 0 ? null : at;
};
const maxStalenessMs = (maxStalenessSeconds ?? 5) * 1000;

/**
 * Whether a cached read may be served: no commit for the experiment was announced since its read began, and a
 * running experiment's entry is younger than RESULTS_MAX_STALENESS_SECONDS (so a lost announcement delays no more).
 */
function isFresh(e: AnalysedExperiment, entry: Fresh<unknown> | undefined): entry is Fresh<unknown> {
  if (entry === undefined || typeof entry.read_at !== 'number') return false;
  const last = lastCommit(e.id);
  if (last !== null && last > entry.read_at) return false;
  return e.status !== 'active' || clock.now().getTime() - entry.read_at < maxStalenessMs;
}

/**
 * A snapshot or payload kept up with the data: a fresh cached entry, else a computation (one at a time per key:
 * reads that come while one runs share it, unless a commit came after its read began).
 */
const computing = new Map<string, Promise<Fresh<unknown>> & { readAt: number }>();
async function kept<T>(e: AnalysedExperiment, key: string, useCache: boolean, compute: () => Promise<Fresh<T>>): Promise<Fresh<T>> {
  if (useCache) {
    const hit = await cache.get<Fresh<T>>(key);
    if (isFresh(e, hit)) return hit as Fresh<T>;
    const running = computing.get(key);
    const last = lastCommit(e.id);
    if (running && (last === null || last <= running.readAt)) return (await running) as Fresh<T>;
  }
  const run = Object.assign((async () => {
    const fresh = await compute();
    await cache.set(key, fresh, ttl(e));
    return fresh;
  })(), { readAt: clock.now().getTime() });
  if (useCache) computing.set(key, run);
  try {
    return await run;
  } finally {
    if (computing.get(key) === run) computing.delete(key);
  }
}

  return { lastCommit, kept };
}
