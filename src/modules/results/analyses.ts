/**
 * The analyses beside the results payload on the primary metric, or on the metric asked for (metric_id): the
 * sample-size plan, the sequential mSPRT and the Bayesian analysis. A metric naming a metric library definition is
 * analysed per the definition, from its per-user values (docs/statistics.md, "Definitions in the other analyses").
 */
import type { NamedDefinition } from '../../analysis/definition-arms.js';
import { storedSequentialAlpha } from '../../analysis/payload.js';
import { bayesianBlock } from '../../analysis/bayesian.js';
import { PlanRefused, sampleSizePlan, type SampleSizeQuery } from '../../analysis/sample-size.js';
import { sequentialBlock } from '../../analysis/sequential.js';
import { armTotals, primaryMetric, treatmentsOf, type Metric, type Snapshot } from '../../analysis/snapshot.js';
import type { Clock } from '../../platform/clock.js';
import { BadRequest, NotFound, Unprocessable } from '../../platform/errors.js';
import type { AnalysedExperiment } from './experiment.js';

export const BAYESIAN_NOT_ENABLED = 'Bayesian analysis is not enabled for this experiment';
export const BAYESIAN_NEEDS_METRIC_AND_CONTROL = 'Bayesian analysis needs a metric and a control variant';
export const METRIC_NOT_FOUND = 'Metric not found';

export interface AnalysesDeps {
  clock: Clock;
  experiment(id: string): Promise<AnalysedExperiment>;
  snapshot(e: AnalysedExperiment): Promise<Snapshot>;
  /** The metric's definition (as stored now) and its per-user values; undefined for an inline metric. */
  named(e: AnalysedExperiment, metric: Metric): Promise<NamedDefinition | undefined>;
}

export function createAnalyses(deps: AnalysesDeps) {
  const { clock } = deps;

  /** The metric asked for (404 when the experiment has none of that id), else the primary; with its definition. */
  async function target(e: AnalysedExperiment, metricId: string | undefined) {
    const metric = metricId === undefined ? primaryMetric(e) : e.metrics.find((m) => m.id === metricId);
    if (metricId !== undefined && !metric) throw new NotFound(METRIC_NOT_FOUND);
    const named = metric?.metric_definition_id ? await deps.named(e, metric) : undefined;
    const totals = armTotals(await deps.snapshot(e), metric?.event_name ?? '');
    return { metric, named, totals };
  }

  return {
    async sampleSize(id: string, q: SampleSizeQuery & { metric_id?: string }) {
      const e = await deps.experiment(id);
      const { metric, named, totals } = await target(e, q.metric_id);
      try {
        return sampleSizePlan(e, totals, q, metric, named);
      } catch (err) {
        if (err instanceof PlanRefused) throw new Unprocessable({ type: 'value_error', loc: ['query', err.field], msg: err.message });
        throw err;
      }
    },

    async sequential(id: string, q: { alpha?: number; metric_id?: string }) {
      const e = await deps.experiment(id);
      const { metric, named, totals } = await target(e, q.metric_id);
      const effective = q.alpha ?? storedSequentialAlpha(e);
      const block = sequentialBlock(e, totals, effective, treatmentsOf(e), metric, named);
      return {
        experiment_id: e.id,
        alpha: effective,
        alpha_source: q.alpha === undefined ? ('experiment' as const) : ('request' as const),
        sequential: block,
        at_risk: block?.at_risk ?? false,
        alpha_spending: [] as never[],
        ...(named?.definition.kind === 'quantile' ? { unavailable_reason: 'not_defined_for_quantiles' as const } : {}),
        analysis_status: 'ga' as const,
        computed_at: clock.now().toISOString(),
      };
    },

    async bayesian(id: string, q: { metric_id?: string } = {}) {
      const e = await deps.experiment(id);
      if (!e.bayesian_enabled) throw new BadRequest(BAYESIAN_NOT_ENABLED);
      const { metric, named, totals } = await target(e, q.metric_id);
      const block = bayesianBlock(e, totals, metric, named);
      if (!block) throw new BadRequest(BAYESIAN_NEEDS_METRIC_AND_CONTROL);
      return { experiment_id: e.id, ...block, analysis_status: 'ga' as const, computed_at: clock.now().toISOString() };
    },
  };
}
