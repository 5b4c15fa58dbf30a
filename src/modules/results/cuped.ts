/**
 * GET /results/{id}/cuped: CUPED per conversion metric and per metric naming a proportion, mean or ratio definition
 * (src/analysis/cuped.ts, definition-cuped.ts), with the covariate metric of variance_reduction_config.
 */
import { metricKind } from '../../analysis/compare.js';
import { covariateOf, cupedMetric } from '../../analysis/cuped.js';
import { combinedAggregates } from '../../analysis/definitions.js';
import { definitionCupedMetric } from '../../analysis/definition-cuped.js';
import { ENGINE_VERSION } from '../../analysis/domain.js';
import { controlOf, type Metric } from '../../analysis/snapshot.js';
import type { CupedSums, DefinitionSettings, VariantUserValues } from '../../analysis/types.js';
import type { Clock } from '../../platform/clock.js';
import { armStats, definitionReads } from '../tracking/read-model.js';
import type { AnalysedExperiment } from './experiment.js';
import type { createReader } from './read.js';

export const CUPED_NOTICE =
  'Beta: CUPED adjusts conversion metrics with a pooled within-variant regression on pre-exposure events; the method may change.';

type Reader = ReturnType<typeof createReader>['consistentRead'];

export function createCuped({ clock, consistentRead }: { clock: Clock; consistentRead: Reader }) {
  /** Per metric id: conversion metrics' CUPED sums, definition metrics' per-user values with the covariate. */
  const load = (e: AnalysedExperiment, covariate: Metric, inline: Metric[], named: Array<{ metric: Metric; definition: DefinitionSettings }>) =>
    consistentRead(e, async (tx, _marks, excluded) => {
      const kind = metricKind(covariate.metric_type);
      const covariateKind = kind === 'conversion' ? 'indicator' : kind;
      const sums = new Map<string, CupedSums[]>();
      for (const m of inline) sums.set(m.id, await armStats.cupedSums(tx, e.id, m.event_name, covariate.event_name, covariateKind, excluded));
      const values = new Map<string, VariantUserValues[]>();
      const users = named.length ? await armStats.analysedUsers(tx, e.id, excluded) : new Map<string, number>();
      for (const { metric, definition } of named) {
        const { aggregates, columns } = combinedAggregates([definition]);
        const cols = columns.get(definition.id)!.values;
        const rows = await definitionReads.userValuesWithCovariate(tx, e.id, aggregates, covariate.event_name, covariateKind, excluded);
        // [the definition's values…, covariate, has history]
        const project = (r: number[]) => [...cols.map((i) => r[i]), r[aggregates.length], r[aggregates.length + 1]];
        values.set(metric.id, e.variants.map((v) => ({ variantId: v.id, users: users.get(v.id) ?? 0, rows: (rows.get(v.id) ?? []).map(project) })));
      }
      return { sums, values };
    });

  return async function cuped(e: AnalysedExperiment, definitions: DefinitionSettings[]) {
    const covariate = covariateOf(e);
    const byId = new Map(definitions.map((d) => [d.id, d]));
    const definitionOf = (m: Metric) => (m.metric_definition_id ? byId.get(m.metric_definition_id) : undefined);
    const metrics = e.metrics.filter((m) => definitionOf(m) || (!m.metric_definition_id && metricKind(m.metric_type) === 'conversion'));
    const inline = metrics.filter((m) => !definitionOf(m));
    const named = metrics.flatMap((m) => {
      const definition = definitionOf(m);
      return definition && definition.kind !== 'quantile' ? [{ metric: m, definition }] : [];
    });
    const covariateMetric = 'metric' in covariate ? covariate.metric : null;
    const reason = 'reason' in covariate ? covariate.reason : controlOf(e) ? null : ('no_control' as const);
    const read = covariateMetric && reason === null ? await load(e, covariateMetric, inline, named) : { sums: new Map(), values: new Map() };
    return {
      experiment_id: e.id,
      covariate_metric_id: covariateMetric?.id ?? null,
      covariate_metric_name: covariateMetric?.name ?? null,
      correction_method: e.correction_method,
      confidence_level: e.confidence_level,
      unavailable_reason: reason,
      metrics: metrics.map((m) => {
        const definition = definitionOf(m);
        return definition
          ? definitionCupedMetric(e, m, definition, read.values.get(m.id) ?? [], reason)
          : cupedMetric(e, m, read.sums.get(m.id) ?? [], reason);
      }),
      engine_version: ENGINE_VERSION,
      analysis_status: 'beta' as const,
      analysis_notice: CUPED_NOTICE,
      computed_at: clock.now().toISOString(),
    };
  };
}
