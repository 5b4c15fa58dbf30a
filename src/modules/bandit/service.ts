import type { Db } from '../../db/client.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { localCache } from '../../platform/local-cache.js';
import { BadRequest, NotFound, Unprocessable } from '../../platform/errors.js';
import { thompsonWeights } from '../../stats/index.js';
import type { AssignableExperiment, Experiment } from '../experiments/read-model.js';
import { EXPERIMENT_NOT_FOUND } from '../experiments/domain.js';
import type { VariantMetricStats } from '../tracking/read-model.js';
import { ENGINE_VERSION, type BanditView, type WeightsBody } from './schemas.js';
import * as store from './store.js';

export const NOT_A_BANDIT = 'This experiment is not a bandit experiment';
export const NO_PRIMARY_METRIC = 'This experiment has no metric to learn from';
export const WEIGHTS_MUST_COVER_VARIANTS = 'Value error, weights must name every variant of the experiment and nothing else, and sum to 1';
const BANDIT_CHANGED = 'bandit.changed';
/** Thompson draws: enough for weights stable to about ±0.005, deterministic through the seed. */
const DRAWS = 20_000;

/** Every arm keeps at least this share (capped at an even split) so a losing arm is still explored. */
export function explorationFloor(arms: number): number {
  return arms > 0 ? Math.min(0.05, 1 / arms) : 0;
}

export type BanditService = ReturnType<typeof createBanditService>;

export function createBanditService(deps: {
  db: Db;
  clock: Clock;
  bus: Bus;
  audit: AuditLog;
  /** The experiment with its variants and metrics (the experiments module's read model). */
  experiments: { experiment(id: string): Promise<Experiment | undefined> };
  /** Tracking's per-variant counts of a metric event (its data read model). */
  tracking: { variantMetricStats(experimentId: string, eventName: string): Promise<VariantMetricStats[]> };
}) {
  const { db } = deps;
  const cache = localCache<string, Record<string, number>>({ max: 5_000, ttlMs: 60_000 });
  deps.bus.subscribe(BANDIT_CHANGED, (id) => cache.delete(id));

  const initialWeights = (variants: Array<{ id: string; trafficAllocation: number }>) =>
    Object.fromEntries(variants.map((v) => [v.id, v.trafficAllocation / 100]));

  async function banditExperiment(id: string): Promise<Experiment> {
    const e = await deps.experiments.experiment(id);
    if (!e) throw new NotFound(EXPERIMENT_NOT_FOUND);
    if (e.experimentType !== 'bandit') throw new BadRequest(NOT_A_BANDIT);
    return e;
  }

  const primaryMetric = (e: Experiment) => e.metrics.find((m) => m.isPrimary) ?? e.metrics[0];

  async function view(e: Experiment): Promise<BanditView> {
    const state = await store.findBanditState(db, e.id);
    const weights = state?.weights ?? initialWeights(e.variants);
    const metric = primaryMetric(e);
    const stats = metric ? await deps.tracking.variantMetricStats(e.id, metric.eventName) : [];
    const byVariant = new Map(stats.map((s) => [s.variantId, s]));
    return {
      experiment_id: e.id,
      weights,
      source: state?.source ?? 'initial',
      arms: e.variants.map((v) => ({
        variant_id: v.id, variant_name: v.name, is_control: v.isControl,
        pulls: byVariant.get(v.id)?.users ?? 0, conversions: byVariant.get(v.id)?.converters ?? 0, weight: weights[v.id] ?? 0,
      })),
      exploration_floor: explorationFloor(e.variants.length),
      engine_version: state?.engineVersion ?? ENGINE_VERSION,
      updated_at: (state?.updatedAt ?? deps.clock.now()).toISOString(),
    };
  }

  async function save(actor: Actor, e: Experiment, weights: Record<string, number>, source: 'thompson' | 'manual') {
    await db.transaction(async (tx) => {
      const before = await store.findBanditState(tx, e.id);
      await store.saveBanditState(tx, { experimentId: e.id, weights, source, engineVersion: ENGINE_VERSION, updatedAt: deps.clock.now() });
      await deps.audit.record(tx, actor, {
        action: source === 'manual' ? 'bandit_weights_override' : 'bandit_update',
        entityType: 'experiment',
        entityId: e.id,
        before: before ? { weights: before.weights } : null,
        after: { weights },
      });
    });
    cache.delete(e.id);
    await deps.bus.publish(BANDIT_CHANGED, e.id).catch(() => undefined);
  }

  return {
    /** For assignment: current weights of a bandit experiment, held in memory until they change. */
    async weightsFor(e: AssignableExperiment): Promise<Record<string, number> | null> {
      if (e.experimentType !== 'bandit') return null;
      const weights = await cache.fill(e.id, async () => (await store.findBanditState(db, e.id))?.weights ?? initialWeights(e.variants));
      return weights ?? null;
    },

    get: async (id: string) => view(await banditExperiment(id)),

    /** Thompson sampling over each arm's Beta(1 + conversions, 1 + non-conversions), with the exploration floor. */
    async update(actor: Actor, id: string): Promise<BanditView> {
      const e = await banditExperiment(id);
      const metric = primaryMetric(e);
      if (!metric) throw new BadRequest(NO_PRIMARY_METRIC);
      const stats = new Map((await deps.tracking.variantMetricStats(e.id, metric.eventName)).map((s) => [s.variantId, s]));
      const arms = e.variants.map((v) => ({ successes: stats.get(v.id)?.converters ?? 0, trials: stats.get(v.id)?.users ?? 0 }));
      const computed = thompsonWeights(arms, { draws: DRAWS, seed: 1, floor: explorationFloor(arms.length) }) ?? arms.map(() => 1 / arms.length);
      await save(actor, e, Object.fromEntries(e.variants.map((v, i) => [v.id, computed[i]])), 'thompson');
      return view(e);
    },

    /** ADMIN override: weights for every variant, summing to 1. */
    async setWeights(actor: Actor, id: string, body: WeightsBody): Promise<BanditView> {
      const e = await banditExperiment(id);
      const ids = new Set(e.variants.map((v) => v.id));
      const entries = Object.entries(body.weights);
      const sum = entries.reduce((a, [, w]) => a + w, 0);
      if (entries.length !== ids.size || entries.some(([k]) => !ids.has(k)) || Math.abs(sum - 1) > 1e-6) {
        throw new Unprocessable({ type: 'value_error', loc: ['body', 'weights'], msg: WEIGHTS_MUST_COVER_VARIANTS });
      }
      await save(actor, e, body.weights, 'manual');
      return view(e);
    },
  };
}
