import { createHash } from 'node:crypto';
import type { Db, Executor } from '../../db/client.js';
import type { CorrectionMethod } from '../../db/schema/experiments.js';
import type { Bus } from '../../platform/bus.js';
import type { Cache } from '../../platform/cache.js';
import type { Clock } from '../../platform/clock.js';
import { BadRequest, NotFound, NotImplemented } from '../../platform/errors.js';
import type { ExperimentListQuery, ExperimentView } from '../experiments/schemas.js';
import { ENGINE_VERSION } from '../bandit/schemas.js';
import { bayesianBlock } from './bayesian.js';
import { metricKind } from './compare.js';
import { covariateOf, cupedMetric } from './cuped.js';
import { dailyResults } from './daily.js';
import { buildResults, storedSequentialAlpha, type ResultsOptions, type ResultsPayload } from './payload.js';
import { sampleSizePlan, type SampleSizeQuery } from './sample-size.js';
import { segmentCounts, segmentedResults, type SegmentedResults } from './segments.js';
import { sequentialBlock } from './sequential.js';
import { armTotals, controlOf, primaryMetric, treatmentsOf, type Metric, type Snapshot } from './snapshot.js';
import * as store from './store.js';

export const BAYESIAN_NOT_ENABLED = 'Bayesian analysis is not enabled for this experiment';
export const BAYESIAN_NEEDS_METRIC_AND_CONTROL = 'Bayesian analysis needs a metric and a control variant';
export const SEGMENTS_OF_DRAFT = 'Segment breakdown is not available for a draft experiment';
export const METRIC_NOT_FOUND = 'Metric not found';
export const POST_STRATIFICATION_NOT_IMPLEMENTED = 'Post-stratification is not implemented';
export const CUPED_NOTICE =
  'Beta: CUPED adjusts conversion metrics with a pooled within-variant regression on pre-exposure events; the method may change.';

/**
 * Events are stored within milliseconds of their created_at (the tracking writer acknowledges after commit), so
 * everything older than this lag is final and can be rolled up; newer events are read directly on each computation.
 */
export const ROLLUP_LAG_MS = 60_000;
/** Spec, "Caching": results are cached 5 minutes while the experiment runs, 24 hours otherwise. */
export const LIVE_TTL_SECONDS = 300;
export const SETTLED_TTL_SECONDS = 86_400;
/** Spec, "Caching": daily and segmented results are cached an hour when CACHE_ENABLED is on, and not cleared on change. */
export const EXPERIMENT_ROUTE_TTL_SECONDS = 3_600;
const EXPERIMENT_CHANGED = 'experiments.changed';

export interface ResultsDeps {
  db: Db;
  clock: Clock;
  bus: Bus;
  cache: Cache;
  /** CACHE_ENABLED: caches daily and segmented results. */
  cacheEnabled: boolean;
  experiments: {
    get(id: string): Promise<ExperimentView>;
    list(query: ExperimentListQuery): Promise<ExperimentView[]>;
    recordBayesianDecision(id: string, decision: ExperimentView['bayesian_decision']): Promise<void>;
  };
  /** Alerts subscribers (notification preferences) of a sample-ratio mismatch; never throws. */
  announceSrm?: (payload: { experiment_id: string; experiment_name: string; p_value: number }) => void;
}

export interface ResultsQuery {
  correction_method?: CorrectionMethod;
  confidence_level?: number;
  use_cache?: boolean;
  breakdown?: string;
}

export type ResultsService = ReturnType<typeof createResultsService>;

const eventNames = (e: ExperimentView) => [...new Set(e.metrics.map((m) => m.event_name))];

/**
 * Cache keys. `live` entries carry the experiment's updated_at, so any change to it (settings, metrics, status) is a
 * miss at once in every process; the bus only frees the memory early. `route` entries (daily and segmented results)
 * are cleared by invalidate-cache only, as the spec says a change clears the detail cache only.
 */
const prefix = (id: string) => `results:${id}:`;
const livePrefix = (id: string) => `${prefix(id)}live:`;
const liveKey = (e: ExperimentView, part: string) => `${livePrefix(e.id)}${e.updated_at}:${part}`;
/** A free text in a cache key, as a fixed-length digest. */
const keyPart = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);
const routeKey = (id: string, part: string) => `${prefix(id)}route:${part}`;

export function createResultsService(deps: ResultsDeps) {
  const { db, clock, cache } = deps;
  deps.bus.subscribe(EXPERIMENT_CHANGED, (id) => void cache.deletePrefix(livePrefix(id)));

  const ttl = (e: ExperimentView) => (e.status === 'active' ? LIVE_TTL_SECONDS : SETTLED_TTL_SECONDS);

  async function cached<T>(key: string, ttlSeconds: number, useCache: boolean, compute: () => Promise<T>): Promise<T> {
    if (useCache) {
      const hit = await cache.get<T>(key);
      if (hit !== undefined) return hit;
    }
    const value = await compute();
    await cache.set(key, value, ttlSeconds);
    return value;
  }

  /**
   * Rolls up everything older than the lag that is not rolled up yet. The watermark rows are locked for the whole
   * refresh, so refreshes of one experiment from any process take turns and each window is added exactly once.
   */
  async function refresh(e: ExperimentView): Promise<void> {
    // Only a started experiment can have assignments.
    if (e.status === 'draft') return;
    const upTo = new Date(clock.now().getTime() - ROLLUP_LAG_MS);
    const streams = [store.ASSIGNMENTS_STREAM, ...eventNames(e).map(store.metricStream)];
    await db.transaction(async (tx) => {
      await store.tuneForResults(tx);
      const marks = await store.lockWatermarks(tx, e.id, streams);
      const due = (stream: string) => {
        const after = marks.get(stream) ?? null;
        return after === null || after < upTo ? { after, upTo } : undefined;
      };
      const assignmentWindow = due(store.ASSIGNMENTS_STREAM);
      if (assignmentWindow) {
        await store.rollUpAssignments(tx, e.id, e.variants.map((v) => v.id), assignmentWindow);
        await store.setWatermark(tx, e.id, store.ASSIGNMENTS_STREAM, upTo);
      }
      for (const name of eventNames(e)) {
        const window = due(store.metricStream(name));
        if (!window) continue;
        await store.rollUpMetric(tx, e.id, name, window);
        await store.setWatermark(tx, e.id, store.metricStream(name), upTo);
      }
    });
  }

  /** Reads in one repeatable-read snapshot, so the rollup and its watermarks agree even while another process refreshes. */
  async function consistentRead<T>(e: ExperimentView, read: (tx: Executor, watermark: (stream: string) => Date | null) => Promise<T>): Promise<T> {
    await refresh(e);
    return db.transaction(async (tx) => {
      await store.tuneForResults(tx);
      const marks = await store.readWatermarks(tx, e.id);
      return read(tx, (stream) => marks.get(stream) ?? null);
    }, { isolationLevel: 'repeatable read', accessMode: 'read only' });
  }

  const loadSnapshot = (e: ExperimentView): Promise<Snapshot> =>
    consistentRead(e, async (tx, watermark) => {
      const assignments = await store.assignmentDays(tx, e.id, e.variants.map((v) => v.id), watermark(store.ASSIGNMENTS_STREAM));
      const metrics: Snapshot['metrics'] = {};
      for (const name of eventNames(e)) metrics[name] = await store.metricDays(tx, e.id, name, watermark(store.metricStream(name)));
      return { assignments, metrics };
    });

  const snapshotOf = (e: ExperimentView, useCache: boolean) =>
    cached(liveKey(e, 'snapshot'), ttl(e), useCache, () => loadSnapshot(e));

  /** Per metric event name, the metric's statistics per segment value and variant. */
  const loadSegmentStats = (e: ExperimentView, attribute: string, names: string[]) =>
    consistentRead(e, async (tx, watermark) => {
      const out = new Map<string, store.SegmentStats[]>();
      for (const name of names) out.set(name, await store.segmentStats(tx, e.id, attribute, name, watermark(store.metricStream(name))));
      return out;
    });

  const optionsOf = (e: ExperimentView, q: { correction_method?: CorrectionMethod; confidence_level?: number }): ResultsOptions => ({
    correction_method: q.correction_method ?? e.correction_method,
    // Rounded to 0.001 for the computation and the cache key alike, so free query values share a few entries.
    confidence_level: q.confidence_level === undefined ? e.confidence_level : Math.round(q.confidence_level * 1000) / 1000,
  });

  async function segmented(e: ExperimentView, attribute: string, confidenceLevel: number): Promise<SegmentedResults> {
    return segmentedResults(e, attribute, await loadSegmentStats(e, attribute, eventNames(e)), confidenceLevel);
  }

  /**
   * A failed sample-ratio check of a running experiment is alerted once per experiment in this process's life
   * (results are recomputed every few minutes; a repeated alert would add nothing).
   */
  const srmAnnounced = new Set<string>();
  function announceSrm(e: ExperimentView, payload: ResultsPayload): void {
    if (!payload.srm?.warning || e.status !== 'active' || srmAnnounced.has(e.id)) return;
    srmAnnounced.add(e.id);
    deps.announceSrm?.({ experiment_id: e.id, experiment_name: e.name, p_value: payload.srm.p_value });
  }

  async function results(id: string, q: ResultsQuery = {}): Promise<ResultsPayload> {
    const e = await deps.experiments.get(id);
    const options = optionsOf(e, q);
    const useCache = q.use_cache ?? true;
    const key = liveKey(e, `results:${options.correction_method}:${options.confidence_level}:${q.breakdown === undefined ? '' : keyPart(q.breakdown)}`);
    return cached(key, ttl(e), useCache, async () => {
      const snapshot = await snapshotOf(e, useCache);
      const breakdown = q.breakdown === undefined ? null : await segmented(e, q.breakdown, options.confidence_level);
      const payload = buildResults(e, snapshot, options, breakdown, clock.now());
      // The experiment reports the latest Bayesian decision (a result only: nothing stops the experiment on it).
      const decision = payload.bayesian_results?.bayesian_decision ?? null;
      if (decision !== e.bayesian_decision && (decision !== null || e.bayesian_enabled)) {
        await deps.experiments.recordBayesianDecision(e.id, decision);
      }
      announceSrm(e, payload);
      return payload;
    });
  }

  /** Per conversion metric id, the CUPED sums with the covariate counted as its metric type counts. */
  const loadCupedSums = (e: ExperimentView, covariate: Metric, metrics: Metric[]) =>
    consistentRead(e, async (tx, watermark) => {
      const kind = metricKind(covariate.metric_type);
      const out = new Map<string, store.CupedSums[]>();
      for (const m of metrics) {
        const sums = await store.cupedSums(
          tx, e.id, m.event_name, watermark(store.metricStream(m.event_name)), covariate.event_name, kind === 'conversion' ? 'indicator' : kind,
        );
        out.set(m.id, sums);
      }
      return out;
    });

  return {
    results,

    /** preValidation of routes where an unknown experiment is 404 whatever the other parameters (spec, sample-size). */
    async requireExperiment(id: string): Promise<void> {
      if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) await deps.experiments.get(id);
    },

    async invalidate(id: string): Promise<{ message: string }> {
      await deps.experiments.get(id);
      await cache.deletePrefix(prefix(id));
      return { message: 'Cached results cleared' };
    },

    async sampleSize(id: string, q: SampleSizeQuery) {
      const e = await deps.experiments.get(id);
      const snapshot = await snapshotOf(e, true);
      return sampleSizePlan(e, armTotals(snapshot, primaryMetric(e)?.event_name ?? ''), q);
    },

    async sequential(id: string, alpha: number | undefined) {
      const e = await deps.experiments.get(id);
      const snapshot = await snapshotOf(e, true);
      const effective = alpha ?? storedSequentialAlpha(e);
      const block = sequentialBlock(e, armTotals(snapshot, primaryMetric(e)?.event_name ?? ''), effective, treatmentsOf(e));
      return {
        experiment_id: e.id,
        alpha: effective,
        alpha_source: alpha === undefined ? ('experiment' as const) : ('request' as const),
        sequential: block,
        at_risk: block?.at_risk ?? false,
        alpha_spending: [] as never[],
        analysis_status: 'ga' as const,
        computed_at: clock.now().toISOString(),
      };
    },

    async bayesian(id: string) {
      const e = await deps.experiments.get(id);
      if (!e.bayesian_enabled) throw new BadRequest(BAYESIAN_NOT_ENABLED);
      const snapshot = await snapshotOf(e, true);
      const block = bayesianBlock(e, armTotals(snapshot, primaryMetric(e)?.event_name ?? ''));
      if (!block) throw new BadRequest(BAYESIAN_NEEDS_METRIC_AND_CONTROL);
      return { experiment_id: e.id, ...block, analysis_status: 'ga' as const, computed_at: clock.now().toISOString() };
    },

    async postStratification(id: string): Promise<never> {
      await deps.experiments.get(id);
      throw new NotImplemented(POST_STRATIFICATION_NOT_IMPLEMENTED);
    },

    async cuped(id: string) {
      const e = await deps.experiments.get(id);
      return cached(liveKey(e, 'cuped'), ttl(e), true, async () => {
        const covariate = covariateOf(e);
        const conversionMetrics = e.metrics.filter((m) => metricKind(m.metric_type) === 'conversion');
        const covariateMetric = 'metric' in covariate ? covariate.metric : null;
        const reason = 'reason' in covariate ? covariate.reason : controlOf(e) ? null : ('no_control' as const);
        const sums = covariateMetric && reason === null ? await loadCupedSums(e, covariateMetric, conversionMetrics) : new Map<string, store.CupedSums[]>();
        return {
          experiment_id: e.id,
          covariate_metric_id: covariateMetric?.id ?? null,
          covariate_metric_name: covariateMetric?.name ?? null,
          correction_method: e.correction_method,
          confidence_level: e.confidence_level,
          unavailable_reason: reason,
          metrics: conversionMetrics.map((m) => cupedMetric(e, m, sums.get(m.id) ?? [], reason)),
          engine_version: ENGINE_VERSION,
          analysis_status: 'beta' as const,
          analysis_notice: CUPED_NOTICE,
          computed_at: clock.now().toISOString(),
        };
      });
    },

    /** Counts per segment (no test); a draft has no assignments to break down (400). */
    async segmentBreakdown(id: string, attribute: string, q: { metric_id?: string; skip_cache?: boolean }) {
      const e = await deps.experiments.get(id);
      if (e.status === 'draft') throw new BadRequest(SEGMENTS_OF_DRAFT);
      let metrics: Metric[] = e.metrics;
      if (q.metric_id !== undefined) {
        metrics = e.metrics.filter((m) => m.id === q.metric_id);
        if (metrics.length === 0) throw new NotFound(METRIC_NOT_FOUND);
      }
      return cached(liveKey(e, `segments:${JSON.stringify([attribute, q.metric_id ?? null])}`), ttl(e), !q.skip_cache, async () =>
        segmentCounts(e, attribute, metrics, await loadSegmentStats(e, attribute, [...new Set(metrics.map((m) => m.event_name))]), q.metric_id ?? null));
    },

    /** GET /experiments/{id}/daily-results; cached an hour when CACHE_ENABLED is on (spec, "Caching"). */
    async daily(id: string) {
      const e = await deps.experiments.get(id);
      const compute = async () => dailyResults(e, await snapshotOf(e, false), clock.now());
      return deps.cacheEnabled ? cached(routeKey(id, 'daily'), EXPERIMENT_ROUTE_TTL_SECONDS, true, compute) : compute();
    },

    /** GET /experiments/{id}/segmented-results/{segment_by}: tested per segment, at the stored level. */
    async segmentedResults(id: string, attribute: string) {
      const e = await deps.experiments.get(id);
      const compute = async () => ({
        experiment_id: e.id, ...(await segmented(e, attribute, e.confidence_level)), analysis_status: 'ga' as const, computed_at: clock.now().toISOString(),
      });
      return deps.cacheEnabled ? cached(routeKey(id, `segmented:${keyPart(attribute)}`), EXPERIMENT_ROUTE_TTL_SECONDS, true, compute) : compute();
    },

    /** For the interactions module: experiment A's metric among users in both experiments, per variant pair. */
    async interactionCells(a: ExperimentView, b: ExperimentView, metric: Metric) {
      return consistentRead(a, (tx, watermark) => store.interactionCells(tx, a.id, b.id, metric.event_name, watermark(store.metricStream(metric.event_name))));
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
      };
    },

    /** Scheduler job: keeps the rollups of running experiments current, so requests only read the last minute. */
    async refreshActive(): Promise<void> {
      const pageSize = 500;
      for (let skip = 0; ; skip += pageSize) {
        const page = await deps.experiments.list({ status_filter: 'active', skip, limit: pageSize, sort_by: 'created_at', sort_order: 'asc' });
        for (const e of page) await refresh(e);
        if (page.length < pageSize) return;
      }
    },
  };
}
