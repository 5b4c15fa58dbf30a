import type { Clock } from '../../platform/clock.js';
import { BadRequest, NotFound } from '../../platform/errors.js';
import type { Experiment } from '../experiments/read-model.js';
import { EXPERIMENT_NOT_FOUND } from '../experiments/domain.js';
import type { ResultsService } from '../results/service.js';
import type { AssignmentOverlap } from '../tracking/read-model.js';
import { interactionAnalysis, type InteractionAnalysis } from './analysis.js';

export const SAME_EXPERIMENT = 'An experiment cannot be tested for interaction with itself';
export const INTERACTION_NOTICE =
  'Beta: the interaction test compares treatment effects across the variants of the other experiment among shared users; the method may change.';

export interface InteractionsDeps {
  clock: Clock;
  /** The experiments read model: one experiment, and a page of the active ones (oldest first). */
  experiments: { experiment(id: string): Promise<Experiment | undefined>; activePage(skip: number, limit: number): Promise<Experiment[]> };
  results: Pick<ResultsService, 'interactionCells'>;
  /** Tracking's assignment counts (its data read model). */
  tracking: {
    assignmentOverlaps(experimentIds: string[]): Promise<AssignmentOverlap[]>;
    assignedUsersPerExperiment(experimentIds: string[]): Promise<Map<string, number>>;
  };
}

export type InteractionsService = ReturnType<typeof createInteractionsService>;

export function createInteractionsService(deps: InteractionsDeps) {
  const { clock } = deps;

  async function experiment(id: string): Promise<Experiment> {
    const e = await deps.experiments.experiment(id);
    if (!e) throw new NotFound(EXPERIMENT_NOT_FOUND);
    return e;
  }

  async function activeExperiments(): Promise<Experiment[]> {
    const out: Experiment[] = [];
    const pageSize = 500;
    for (let skip = 0; ; skip += pageSize) {
      const page = await deps.experiments.activePage(skip, pageSize);
      out.push(...page);
      if (page.length < pageSize) return out;
    }
  }

  /** X's primary metric among users of both, or null when X has no metric. */
  async function analyse(x: Experiment, y: Experiment): Promise<InteractionAnalysis | null> {
    // The primary metric, else the first (as results choose it).
    const metric = x.metrics.find((m) => m.isPrimary) ?? x.metrics[0];
    if (!metric) return null;
    return interactionAnalysis(x, y, metric, await deps.results.interactionCells(x, y, metric.eventName));
  }

  return {
    /** Overlap between every pair of active experiments (users assigned to both); no test (spec). */
    async scan() {
      const active = await activeExperiments();
      const ids = active.map((e) => e.id);
      const [overlaps, users] = await Promise.all([deps.tracking.assignmentOverlaps(ids), deps.tracking.assignedUsersPerExperiment(ids)]);
      const byId = new Map(active.map((e) => [e.id, e]));
      const share = (shared: number, id: string) => ((users.get(id) ?? 0) > 0 ? shared / users.get(id)! : 0);
      return {
        experiments_scanned: active.length,
        pairs: overlaps
          .sort((a, b) => b.users - a.users || (a.experimentA + a.experimentB).localeCompare(b.experimentA + b.experimentB))
          .map((o) => ({
            experiment_a_id: o.experimentA,
            experiment_a_name: byId.get(o.experimentA)!.name,
            experiment_b_id: o.experimentB,
            experiment_b_name: byId.get(o.experimentB)!.name,
            overlapping_users: o.users,
            share_of_a: share(o.users, o.experimentA),
            share_of_b: share(o.users, o.experimentB),
          })),
        computed_at: clock.now().toISOString(),
      };
    },

    /** Both directions: A's primary metric across B's variants, and B's across A's. */
    async pair(aId: string, bId: string) {
      if (aId.toLowerCase() === bId.toLowerCase()) throw new BadRequest(SAME_EXPERIMENT);
      const [a, b] = await Promise.all([experiment(aId), experiment(bId)]);
      const [overlap] = await deps.tracking.assignmentOverlaps([a.id, b.id]);
      const analyses = [await analyse(a, b), await analyse(b, a)].filter((x): x is InteractionAnalysis => x !== null);
      return {
        experiment_a_id: a.id,
        experiment_b_id: b.id,
        overlapping_users: overlap?.users ?? 0,
        analyses,
        analysis_status: 'beta' as const,
        analysis_notice: INTERACTION_NOTICE,
        computed_at: clock.now().toISOString(),
      };
    },
  };
}
