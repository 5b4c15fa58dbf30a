import type { Db, Executor } from '../../db/client.js';
import type { CreatedPeriod, Cursor } from '../../db/paging.js';
import type { ExperimentRow, MetricRow, VariantRow } from '../../db/schema/experiments.js';
import { EXPERIMENT_STATUSES, type ExperimentStatus } from './domain.js';
import { collectSegmentIds } from '../../targeting/index.js';
import type { ExclusionGroup } from '../mutual-exclusion/domain.js';
import * as store from './store.js';

/** An experiment as other modules reason about it: the stored fields with its variants and metrics (no wire shape). */
export interface Experiment extends ExperimentRow {
  variants: VariantRow[];
  metrics: MetricRow[];
}

/** Id, key, name and status: how segments and mutual exclusion groups name an experiment. */
export interface ExperimentSummary {
  id: string;
  key: string;
  name: string;
  status: ExperimentStatus;
}

/** What tracking needs to assign a user: see `findAssignable`. */
export interface AssignableExperiment {
  id: string;
  key: string;
  name: string;
  status: ExperimentStatus;
  experimentType: ExperimentRow['experimentType'];
  variants: Array<{ id: string; name: string; isControl: boolean; trafficAllocation: number; configuration: Record<string, unknown> | null }>;
  targetingRules: Record<string, unknown> | null;
  mutualExclusionGroup: ExclusionGroup | null;
}

export interface ExperimentsReadModelDeps {
  db: Db;
  /** The active mutual exclusion group holding an experiment (the mutual-exclusion module's read model). */
  exclusionGroups: { activeGroupOf(experimentId: string): Promise<ExclusionGroup | null> };
}

export type ExperimentsReadModel = ReturnType<typeof createExperimentsReadModel>;

/**
 * The experiments module's reads for other modules (tracking, segments, mutual exclusion, counters, export, results,
 * interactions): domain types, never the HTTP response shape. It needs only the database and the exclusion groups'
 * read model, so modules the experiments service itself needs (segments) can be given it at construction.
 */
export function createExperimentsReadModel(deps: ExperimentsReadModelDeps) {
  const { db } = deps;

  async function assignable(row: ExperimentRow | undefined): Promise<AssignableExperiment | undefined> {
    if (!row) return undefined;
    const [variants, group] = await Promise.all([store.listVariants(db, [row.id]), deps.exclusionGroups.activeGroupOf(row.id)]);
    return {
      id: row.id,
      key: row.key,
      name: row.name,
      status: row.status,
      experimentType: row.experimentType,
      variants: variants.map((v) => ({
        id: v.id,
        name: v.name,
        isControl: v.isControl,
        trafficAllocation: v.trafficAllocation,
        configuration: v.configuration,
      })),
      targetingRules: row.targetingRules,
      mutualExclusionGroup: group,
    };
  }

  return {
    /** One experiment with its variants and metrics, undefined when there is none. */
    async experiment(id: string): Promise<Experiment | undefined> {
      const row = await store.findExperiment(db, id);
      if (!row) return undefined;
      const [variants, metrics] = await Promise.all([store.listVariants(db, [id]), store.listMetrics(db, [id])]);
      return { ...row, variants, metrics };
    },

    /** For results and interactions: a page of the active experiments, oldest first, with their variants and metrics. */
    async activePage(skip: number, limit: number): Promise<Experiment[]> {
      const rows = await store.listExperiments(db, { status: 'active', sortBy: 'created_at', sortOrder: 'asc', skip, limit });
      const ids = rows.map((r) => r.id);
      const [variants, metrics] = await Promise.all([store.listVariants(db, ids), store.listMetrics(db, ids)]);
      return rows.map((row) => ({
        ...row,
        variants: variants.filter((v) => v.experimentId === row.id),
        metrics: metrics.filter((m) => m.experimentId === row.id),
      }));
    },

    /** For counters: whether an experiment has this id. */
    async exists(id: string): Promise<boolean> {
      return (await store.findExperiments(db, [id])).length > 0;
    },

    /** For tracking: the experiment with this key as assignment needs it, whatever its status (the caller checks). */
    findAssignable: async (key: string) => assignable(await store.findExperimentByKey(db, key)),

    /** For tracking: as findAssignable, by id. */
    findAssignableById: async (id: string) => assignable(await store.findExperiment(db, id)),

    /** For tracking: the experiment a variant belongs to. */
    experimentOfVariant: (variantId: string) => store.experimentIdOfVariant(db, variantId),

    /**
     * For segments: experiments in any status whose targeting rules name the segment (the usage route lists them all;
     * archiving is refused by the draft, active and paused ones), read in `executor` (the archiving transaction,
     * under the segment's row lock).
     */
    async experimentsUsingSegment(segmentId: string, executor: Executor = db): Promise<ExperimentSummary[]> {
      const rows = await store.experimentsWithRulesMentioning(executor, [...EXPERIMENT_STATUSES], segmentId);
      return rows
        .filter((r) => collectSegmentIds(r.targetingRules).includes(segmentId))
        .map((r) => ({ id: r.id, key: r.key, name: r.name, status: r.status }));
    },

    /** For the metric library: experiments in any status with a metric naming the definition, read in `executor`. */
    async experimentsUsingMetricDefinition(definitionId: string, executor: Executor = db): Promise<ExperimentSummary[]> {
      const rows = await store.experimentsUsingMetricDefinition(executor, definitionId);
      return rows.map((r) => ({ id: r.id, key: r.key, name: r.name, status: r.status }));
    },

    /** For mutual exclusion groups: id, key, name and status of existing experiments among `ids`. */
    async summaries(ids: string[]): Promise<ExperimentSummary[]> {
      const rows = await store.findExperiments(db, ids);
      return rows.map((r) => ({ id: r.id, key: r.key, name: r.name, status: r.status }));
    },

    /** For export: experiments created in a period, a page at a time; their variants; period counts. */
    exportPage: (period: CreatedPeriod, cursor?: Cursor) => store.exportPage(db, period, cursor),
    exportRecord: (id: string) => store.findExportRecord(db, id),
    exportVariants: (experimentIds: string[]) => store.exportVariants(db, experimentIds),
    periodSummary: (period: CreatedPeriod) => store.periodSummary(db, period),
  };
}
