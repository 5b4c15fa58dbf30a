import { createHash } from 'node:crypto';
import { metricKind } from '../../analysis/compare.js';
import { covariateOf, cupedMetric } from '../../analysis/cuped.js';
import { dailyResults } from '../../analysis/daily.js';
import { ENGINE_VERSION } from '../../analysis/domain.js';
import { buildResults, type DefinitionInputs, type ResultsOptions } from '../../analysis/payload.js';
import type { DefinitionSettings } from '../../analysis/types.js';
import { segmentCounts, segmentedResults, type SegmentedResults } from '../../analysis/segments.js';
import { armTotals, controlOf, primaryMetric, treatmentsOf, type Metric } from '../../analysis/snapshot.js';
import type { Db } from '../../db/client.js';
import type { AuditActor, AuditLog } from '../../platform/audit.js';
import type { Bus } from '../../platform/bus.js';
import type { Cache } from '../../platform/cache.js';
import type { Clock } from '../../platform/clock.js';
import { BadRequest, NotFound, NotImplemented, Unprocessable } from '../../platform/errors.js';
import { EXPERIMENTS_CHANGED, type CorrectionMethod } from '../experiments/domain.js';
import type { Experiment } from '../experiments/read-model.js';
import { armStats } from '../tracking/read-model.js';
import { analysedExperiment, readExperiment, type AnalysedExperiment, type ResultsExperiments } from './experiment.js';
import { createRollup, eventNamesOf } from './rollup.js';
import type { ResultsPayload, SrmSettings, SrmSettingsBody } from './schemas.js';
import { createFreshness, type Fresh } from './freshness.js';
import { createBackgroundRollups } from './follow.js';
import { createSrmGuard } from './srm-guard.js';
import { createAnalyses, METRIC_NOT_FOUND } from './analyses.js';
import { createCuped } from './cuped.js';
import { createDefinitionLoads, namedMetrics } from './definition-loads.js';
import * as store from './store.js';

export { ROLLUP_LAG_MS } from './rollup.js';
export { RESULTS_COMPUTING, RESULTS_COMPUTING_RETRY_SECONDS, RESULTS_ROLLUP_REQUESTED, ResultsComputing } from './read.js';
import { createReader, type UserTotalsSink } from './read.js';
import { definitionInputs, namedDefinitions, sinkFor } from './definition-values.js';

export const SEGMENTS_OF_DRAFT = 'Segment breakdown is not available for a draft experiment';
export { BAYESIAN_NEEDS_METRIC_AND_CONTROL, BAYESIAN_NOT_ENABLED, METRIC_NOT_FOUND } from './analyses.js';
export const POST_STRATIFICATION_NOT_IMPLEMENTED = 'Post-stratification is not implemented';
export { CUPED_NOTICE } from './cuped.js';

/** Spec, "Caching": results are cached 5 minutes while the experiment runs, 24 hours otherwise. */
export const LIVE_TTL_SECONDS = 300;
export const SETTLED_TTL_SECONDS = 86_400;
/** Spec, "Caching": daily and segmented results are cached an hour when CACHE_ENABLED is on, and not cleared on change. */
export const EXPERIMENT_ROUTE_TTL_SECONDS = 3_600;
export interface ResultsDeps {
  db: Db;
  clock: Clock;
  bus: Bus;
  cache: Cache;
  /** CACHE_ENABLED: caches daily and segmented results. */
  cacheEnabled: boolean;
  audit: AuditLog;
  /** RESULTS_READ_TIMEOUT_MS: the longest a results read may run before the route answers 202 (PostgreSQL only). */
  readTimeoutMs: number;
  /**
   * RESULTS_MAX_STALENESS_SECONDS (default 5): a cached snapshot of a running experiment is read again once it is this
   * old, whatever the bus said (a commit announced by another process may be lost); one that missed an announced
   * commit is read again at once.
   */
  maxStalenessSeconds?: number;
  /**
   * Statements a first computation runs at once, each on its own connection (RESULTS_PARALLEL_QUERIES on PostgreSQL;
   * 1, one after the other, under embedded PGlite, which has one connection).
   */
  parallel?: number;
  /**
   * RESULTS_COMMIT_ROLLUP_MS: rollups follow the announced commits, at most one per experiment this often in this
   * process (0 or absent: only the results-rollup job rolls up).
   */
  commitRollupMs?: number;
  experiments: ResultsExperiments;
  /** The metric library (its service): what the definitions named by metrics say to analyse, as stored now. */
  definitions?: { analysisSettings(ids: string[]): Promise<DefinitionSettings[]> };
  /** Alerts subscribers (notification preferences) of a sample-ratio mismatch; never throws. */
  announceSrm?: (payload: { experiment_id: string; experiment_name: string; p_value: number; auto_paused?: boolean }) => void;
}

export interface ResultsQuery {
  correction_method?: CorrectionMethod;
  confidence_level?: number;
  use_cache?: boolean;
  breakdown?: string;
}

export type ResultsService = ReturnType<typeof createResultsService>;


/**
 * Cache keys. `live` entries carry the experiment's updated_at, so any change to it (settings, metrics, status) is a
 * miss at once in every process; the bus only frees the memory early. `route` entries (daily and segmented results)
 * are cleared by invalidate-cache only, as the spec says a change clears the detail cache only.
 */
const prefix = (id: string) => `results:${id}:`;
const livePrefix = (id: string) => `${prefix(id)}live:`;
const liveKey = (e: AnalysedExperiment, part: string) => `${livePrefix(e.id)}${e.updated_at}:${part}`;
/** A free text in a cache key, as a fixed-length digest. */
const keyPart = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);
const routeKey = (id: string, part: string) => `${prefix(id)}route:${part}`;

export function createResultsService(deps: ResultsDeps) {
  const { db, clock, cache } = deps;
  const parallel = deps.parallel ?? 1;
  const { refresh } = createRollup({ db, clock, parallel: deps.parallel ?? 1 });
  const srm = createSrmGuard({
    db, clock, audit: deps.audit, pauseAutomatically: (id) => deps.experiments.pauseAutomatically(id), announce: deps.announceSrm,
  });
  deps.bus.subscribe(EXPERIMENTS_CHANGED, (id) => void cache.deletePrefix(livePrefix(id)));

  const ttl = (e: AnalysedExperiment) => (e.status === 'active' ? LIVE_TTL_SECONDS : SETTLED_TTL_SECONDS);
  const { lastCommit, kept } = createFreshness({ bus: deps.bus, clock, cache, maxStalenessSeconds: deps.maxStalenessSeconds, ttl });

  const experiment = (id: string) => readExperiment(deps.experiments, id);

  async function cached<T>(key: string, ttlSeconds: number, useCache: boolean, compute: () => Promise<T>): Promise<T> {
    if (useCache) {
      const hit = await cache.get<T>(key);
      if (hit !== undefined) return hit;
    }
    const value = await compute();
    await cache.set(key, value, ttlSeconds);
    return value;
  }

  // Builds asked for by reads that ran out of time, and rollups following the commits of a running experiment.
  const background = createBackgroundRollups({
    bus: deps.bus,
    commitRollupMs: deps.commitRollupMs,
    refresh: async (id, unlessWithinMs) => {
      const e = await experiment(id);
      if (unlessWithinMs === undefined || e.status === 'active') await refresh(e, { unlessWithinMs });
    },
  });

  const { consistentRead, loadSnapshot } = createReader({ db, bus: deps.bus, readTimeoutMs: deps.readTimeoutMs, parallel: deps.parallel ?? 1 });

  /** `sink`: what a read of this snapshot also gathers for the metric library's definitions (not kept with it). */
  const snapshotOf = (e: AnalysedExperiment, useCache: boolean, sink?: UserTotalsSink) =>
    kept(e, liveKey(e, 'snapshot'), useCache, async () => {
      // Taken before the read begins: every commit heard of by then is in what it reads.
      const readAt = clock.now().getTime();
      const through = lastCommit(e.id);
      return { value: await loadSnapshot(e, sink), read_at: readAt, through };
    });

  /** Per metric event name, the metric's statistics per segment value and variant. */
  const loadSegmentStats = (e: AnalysedExperiment, attribute: string, names: string[]) =>
    consistentRead(e, async (tx, _marks, excluded) => {
      const out = new Map<string, store.SegmentStats[]>();
      for (const name of names) out.set(name, await armStats.segmentStats(tx, e.id, attribute, name, excluded));
      return out;
    });

  const optionsOf = (e: AnalysedExperiment, q: { correction_method?: CorrectionMethod; confidence_level?: number }): ResultsOptions => ({
    correction_method: q.correction_method ?? e.correction_method,
    // Rounded to 0.001 for the computation and the cache key alike, so free query values share a few entries.
    confidence_level: q.confidence_level === undefined ? e.confidence_level : Math.round(q.confidence_level * 1000) / 1000,
  });

  const definitionLoads = createDefinitionLoads(consistentRead);
  /** Per metric of `metrics` naming one of `definitions`: its per-user values per segment (none to read: undefined). */
  const definitionSegments = (e: AnalysedExperiment, attribute: string, metrics: Metric[], definitions: DefinitionSettings[]) => {
    const named = namedMetrics({ metrics }, definitions);
    return named.length ? definitionLoads.bySegment(e, attribute, named) : undefined;
  };
  async function segmented(e: AnalysedExperiment, attribute: string, confidenceLevel: number): Promise<SegmentedResults> {
    const definitionRows = await definitionSegments(e, attribute, e.metrics, await definitionsOf(e));
    return segmentedResults(e, attribute, await loadSegmentStats(e, attribute, eventNamesOf(e)), confidenceLevel, definitionRows);
  }

  /** The definitions the experiment's metrics name, as stored now (none without a metric library). */
  async function definitionsOf(e: AnalysedExperiment): Promise<DefinitionSettings[]> {
    const ids = e.metrics.flatMap((m) => (m.metric_definition_id ? [m.metric_definition_id] : []));
    return ids.length === 0 || !deps.definitions ? [] : deps.definitions.analysisSettings(ids);
  }
  /** A part of the results' cache keys: an edit of a definition (a new version) is a miss at once. */
  const definitionsKey = (definitions: DefinitionSettings[]) =>
    definitions.length === 0 ? '' : `:${keyPart(definitions.map((d) => `${d.id}@${d.version}`).sort().join(','))}`;
  const resultsKey = (e: AnalysedExperiment, options: ResultsOptions, breakdown: string | undefined, definitions: DefinitionSettings[]) =>
    liveKey(e, `results:${options.correction_method}:${options.confidence_level}:${breakdown === undefined ? '' : keyPart(breakdown)}${definitionsKey(definitions)}`);

  /** The payload at the given options; a read only (the rollup job records what follows from it). */
  async function compute(
    e: AnalysedExperiment, q: ResultsQuery, useCache: boolean, definitions: DefinitionSettings[],
  ): Promise<Fresh<ResultsPayload>> {
    const options = optionsOf(e, q);
    const byDefinition = namedDefinitions(e, definitions);
    const sink = sinkFor(e, byDefinition);
    const read = await snapshotOf(e, useCache, sink);
    const snapshot = read.value;
    const breakdown = q.breakdown === undefined ? null : await segmented(e, q.breakdown, options.confidence_level);
    const named = await definitionInputs(e, byDefinition, { consistentRead }, parallel, sink && { sink, assignments: snapshot.assignments });
    const computedAt = clock.now();
    const analysis = buildResults(e, snapshot, options, breakdown, e.status !== 'draft' && (await srm.autoPause(e.id)), named);
    const value: ResultsPayload = {
      experiment_id: e.id, experiment_name: e.name, status: e.status, start_date: e.start_date, end_date: e.end_date,
      computed_at: computedAt.toISOString(), data_through: read.through === null ? null : new Date(read.through).toISOString(),
      ...analysis, analysis_status: 'ga',
    };
    return { value, read_at: read.read_at, through: read.through };
  }

  async function results(id: string, q: ResultsQuery = {}): Promise<ResultsPayload> {
    const e = await experiment(id);
    const options = optionsOf(e, q);
    const useCache = q.use_cache ?? true;
    const definitions = await definitionsOf(e);
    const key = resultsKey(e, options, q.breakdown, definitions);
    return (await kept(e, key, useCache, () => compute(e, q, useCache, definitions))).value;
  }

  /**
   * After each rollup of a running experiment (results-rollup job): the experiment reports the latest Bayesian decision
   * (a result only: nothing stops the experiment on it); a sequential SRM is alerted once per experiment and, when the
   * experiment opted in, pauses it once (a person who resumes it decides).
   */
  async function evaluate(e: AnalysedExperiment): Promise<void> {
    const definitions = await definitionsOf(e);
    const fresh = await compute(e, {}, false, definitions);
    await cache.set(resultsKey(e, optionsOf(e, {}), undefined, definitions), fresh, ttl(e));
    const payload = fresh.value;
    const decision = payload.bayesian_results?.bayesian_decision ?? null;
    if (decision !== e.bayesian_decision && (decision !== null || e.bayesian_enabled)) {
      await deps.experiments.recordBayesianDecision(e.id, decision);
    }
    await srm.onRollup(e, payload.srm);
  }

  const cupedOf = createCuped({ clock, consistentRead });

  const analyses = createAnalyses({
    clock,
    experiment,
    snapshot: async (e) => (await snapshotOf(e, true)).value,
    named: async (e, metric) => {
      const definitions = (await definitionsOf(e)).filter((d) => d.id === metric.metric_definition_id);
      return (await definitionInputs(e, namedDefinitions(e, definitions), { consistentRead }, parallel)).get(metric.id);
    },
  });

  return {
    results,

    /** preValidation of routes where an unknown experiment is 404 whatever the other parameters (spec, sample-size). */
    async requireExperiment(id: string): Promise<void> {
      if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) await experiment(id);
    },

    async invalidate(id: string): Promise<{ message: string }> {
      await experiment(id);
      await cache.deletePrefix(prefix(id));
      return { message: 'Cached results cleared' };
    },

    ...analyses,

    async postStratification(id: string): Promise<never> {
      await experiment(id);
      throw new NotImplemented(POST_STRATIFICATION_NOT_IMPLEMENTED);
    },

    async cuped(id: string) {
      const e = await experiment(id);
      const definitions = await definitionsOf(e);
      return cached(liveKey(e, `cuped${definitionsKey(definitions)}`), ttl(e), true, () => cupedOf(e, definitions));
    },

    /**
     * Counts per segment (no test), with a definition metric's value per segment and variant; a draft has no
     * assignments to break down (400). Keyed on the definitions' versions, so an edit of one shows at once.
     */
    async segmentBreakdown(id: string, attribute: string, q: { metric_id?: string; skip_cache?: boolean }) {
      const e = await experiment(id);
      if (e.status === 'draft') throw new BadRequest(SEGMENTS_OF_DRAFT);
      let metrics: Metric[] = e.metrics;
      if (q.metric_id !== undefined) {
        metrics = e.metrics.filter((m) => m.id === q.metric_id);
        if (metrics.length === 0) throw new NotFound(METRIC_NOT_FOUND);
      }
      const definitions = await definitionsOf(e);
      const key = liveKey(e, `segments:${JSON.stringify([attribute, q.metric_id ?? null])}${definitionsKey(definitions)}`);
      return cached(key, ttl(e), !q.skip_cache, async () => {
        const stats = await loadSegmentStats(e, attribute, [...new Set(metrics.map((m) => m.event_name))]);
        return segmentCounts(e, attribute, metrics, stats, q.metric_id ?? null, await definitionSegments(e, attribute, metrics, definitions));
      });
    },

    /** GET /experiments/{id}/daily-results; cached an hour when CACHE_ENABLED is on (spec, "Caching"). */
    async daily(id: string) {
      const e = await experiment(id);
      const definitions = await definitionsOf(e);
      const compute = async () =>
        dailyResults(e, (await snapshotOf(e, false)).value, clock.now(), await definitionLoads.byDay(e, namedMetrics(e, definitions)));
      return deps.cacheEnabled ? cached(routeKey(id, `daily${definitionsKey(definitions)}`), EXPERIMENT_ROUTE_TTL_SECONDS, true, compute) : compute();
    },

    /** GET /experiments/{id}/segmented-results/{segment_by}: tested per segment, at the stored level. */
    async segmentedResults(id: string, attribute: string) {
      const e = await experiment(id);
      const compute = async () => ({
        experiment_id: e.id, ...(await segmented(e, attribute, e.confidence_level)), analysis_status: 'ga' as const, computed_at: clock.now().toISOString(),
      });
      const key = `segmented:${keyPart(attribute)}${definitionsKey(await definitionsOf(e))}`;
      return deps.cacheEnabled ? cached(routeKey(id, key), EXPERIMENT_ROUTE_TTL_SECONDS, true, compute) : compute();
    },

    /** For the interactions module: experiment A's metric among users in both experiments, per variant pair. */
    async interactionCells(a: Pick<Experiment, 'id' | 'status' | 'variants'>, b: Pick<Experiment, 'id'>, eventName: string) {
      return consistentRead(a, (tx, _marks, excluded) => armStats.interactionCells(tx, a.id, b.id, eventName, excluded));
    },

    /**
     * For the data export: the primary metric's numbers at the stored settings, as GET /results gives them; null when
     * results cannot be computed (no control variant).
     */
    async exportResults(id: string) {
      const payload = await results(id);
      const primary = payload.metrics.find((m) => m.is_primary) ?? payload.metrics[0];
      if (!primary?.variants.some((v) => v.is_control)) return null;
      return {
        winnerVariant: primary.variants.find((v) => v.variant_id === payload.summary.winning_variant_id)?.variant_name ?? null,
        recommendation: payload.summary.recommendation,
        byVariantId: Object.fromEntries(primary.variants.map((v) => [v.variant_id, {
          sampleSize: v.sample_size,
          conversions: v.conversions,
          mean: v.mean ?? 0,
          pValue: v.p_value,
          isSignificant: v.is_significant,
          relativeImprovementPct: v.relative_lift === null ? null : v.relative_lift * 100,
        }])),
        definitionMetrics: payload.metrics.filter((m) => m.definition !== undefined),
      };
    },

    /**
     * Scheduler job: keeps the rollups of running experiments current, so requests only read the last minute, and
     * evaluates each one on its fresh rollup (Bayesian decision, sequential SRM alert and auto-pause).
     */
    async refreshActive(): Promise<void> {
      const pageSize = 500;
      for (let skip = 0; ; skip += pageSize) {
        const page = await deps.experiments.activePage(skip, pageSize);
        for (const e of page.map(analysedExperiment)) {
          await background.exclusive(e.id, () => refresh(e));
          await evaluate(e);
        }
        if (page.length < pageSize) return;
      }
    },

    /** Brings one experiment's rollups up to date now (what the results-rollup job does before evaluating it). */
    async refresh(id: string): Promise<void> {
      await refresh(await experiment(id));
    },

    /** Waits for the background rollups this process is building or was asked for by commits (tests, shutdown). */
    async drain(): Promise<void> {
      await background.drain();
    },

    /** Shutdown: no more rollups driven by commits; waits for the running ones. */
    async stop(): Promise<void> {
      await background.stop();
    },

    async srmSettings(id: string): Promise<SrmSettings> {
      await experiment(id);
      return srm.settings(id);
    },

    /** PUT /results/{id}/srm-settings: the auto-pause opt-in; audited; the cached results show it at once. */
    async updateSrmSettings(actor: AuditActor, id: string, body: SrmSettingsBody): Promise<SrmSettings> {
      await experiment(id);
      const settings = await srm.update(actor, id, body);
      await cache.deletePrefix(prefix(id));
      return settings;
    },
  };
}
