/**
 * Per-user values of the metrics naming metric library definitions, for the segmented and daily results (tracking's
 * definitionReads, projected on each definition's columns as the results payload's read is).
 */
import type { DefinitionDays } from '../../analysis/daily.js';
import { combinedAggregates } from '../../analysis/definitions.js';
import type { DefinitionSegments } from '../../analysis/segments.js';
import type { Metric } from '../../analysis/snapshot.js';
import type { DefinitionSettings, EventAggregate } from '../../analysis/types.js';
import { definitionReads } from '../tracking/read-model.js';
import type { AnalysedExperiment } from './experiment.js';
import type { createReader } from './read.js';

type Reader = ReturnType<typeof createReader>['consistentRead'];

/** The experiment's metrics that name one of `definitions`, with it. */
export function namedMetrics(e: { metrics: Metric[] }, definitions: DefinitionSettings[]): Array<{ metric: Metric; definition: DefinitionSettings }> {
  const byId = new Map(definitions.map((d) => [d.id, d]));
  return e.metrics.flatMap((metric) => {
    const definition = metric.metric_definition_id ? byId.get(metric.metric_definition_id) : undefined;
    return definition ? [{ metric, definition }] : [];
  });
}

/** A definition's aggregates to read and the projection of a read row on its columns. */
function columnsOf(definition: DefinitionSettings): { aggregates: EventAggregate[]; project: (row: number[]) => number[] } {
  const { aggregates, columns } = combinedAggregates([definition]);
  const cols = columns.get(definition.id)!.values;
  return { aggregates, project: (row) => cols.map((i) => row[i]) };
}

export function createDefinitionLoads(consistentRead: Reader) {
  return {
    /** Per metric id: per segment value and variant id, the rows of users with events. */
    bySegment: (e: AnalysedExperiment, attribute: string, named: ReturnType<typeof namedMetrics>): Promise<DefinitionSegments> =>
      consistentRead(e, async (tx, _marks, excluded) => {
        const out: DefinitionSegments = new Map();
        for (const { metric, definition } of named) {
          const { aggregates, project } = columnsOf(definition);
          const read = await definitionReads.userValuesBySegment(tx, e.id, attribute, aggregates, excluded);
          const rows = new Map([...read].map(([segment, variants]) => [segment, new Map([...variants].map(([v, list]) => [v, list.map(project)]))]));
          out.set(metric.id, { definition, rows });
        }
        return out;
      }),

    /** Per metric id: per variant id, each user's values per UTC day with events. */
    byDay: (e: AnalysedExperiment, named: ReturnType<typeof namedMetrics>): Promise<DefinitionDays> =>
      e.status === 'draft' || named.length === 0 ? Promise.resolve(new Map()) : consistentRead(e, async (tx, _marks, excluded) => {
        const out: DefinitionDays = new Map();
        for (const { metric, definition } of named) {
          const { aggregates, project } = columnsOf(definition);
          const read = await definitionReads.userValueDays(tx, e.id, aggregates, excluded);
          out.set(metric.id, { definition, days: new Map([...read].map(([v, list]) => [v, list.map((r) => ({ ...r, values: project(r.values) }))])) });
        }
        return out;
      }),
  };
}
