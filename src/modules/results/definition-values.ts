/**
 * The per-user values of the metric library's definitions named by an experiment's metrics, by tracking's counting
 * rule. A first computation reads them from the metrics' own passes from the start (`UserTotalsSink`: each user's
 * totals at the end of the pass, one snapshot with the day deltas) when every event they read is a metric's event;
 * otherwise (rolled-up metrics, events no metric names, a cached snapshot) they are read in a pass of their own.
 */
import { aggregatesOf, combinedAggregates, projectUserValues } from '../../analysis/definitions.js';
import type { DefinitionInputs } from '../../analysis/payload.js';
import type { AssignmentDay, DefinitionSettings, EventAggregate, VariantUserValues } from '../../analysis/types.js';
import type { Executor } from '../../db/client.js';
import { armStats, type UserTotals } from '../tracking/read-model.js';
import { namedMetrics } from './definition-loads.js';
import type { AnalysedExperiment } from './experiment.js';
import type { createReader, UserTotalsSink } from './read.js';
import { rangesFor } from './rollup.js';

type Named = Array<{ metricId: string; definition: DefinitionSettings }>;

/** The metrics that name one of `definitions`, each with it. */
export const namedDefinitions = (e: AnalysedExperiment, definitions: DefinitionSettings[]): Named =>
  namedMetrics(e, definitions).map(({ metric, definition }) => ({ metricId: metric.id, definition }));

/** What a snapshot read should gather for these definitions: every event their aggregates read, with sums if one sums. */
export function sinkFor(e: AnalysedExperiment, named: Named): UserTotalsSink | undefined {
  if (named.length === 0 || e.status === 'draft') return undefined;
  const wanted = new Map<string, { sums: boolean }>();
  for (const a of combinedAggregates(named.map((n) => n.definition)).aggregates) {
    wanted.set(a.event_name, { sums: wanted.get(a.event_name)?.sums === true || a.aggregate === 'sum' });
  }
  return { wanted };
}

/**
 * One definition's per-user values from the passes' user totals, as `projectUserValues` gives them from a read of its
 * own: per variant, one row per user with a counted event of one of its events (the excluded left out), its
 * aggregates in order (0 for an event the user has none of). A definition of one event needs no pairing of users.
 */
export function valuesFromTotals(
  variants: ReadonlyArray<{ id: string }>, d: DefinitionSettings, totals: Map<string, UserTotals[]>, excluded: string[],
  analysed: Map<string, number>,
): VariantUserValues[] {
  const own = aggregatesOf(d);
  const left = new Set(excluded);
  const rows = new Map(variants.map((v) => [v.id, [] as number[][]]));
  const column = (a: EventAggregate, part: UserTotals) => (a.aggregate === 'count' ? part.counts : part.sums!);
  if (new Set(own.map((a) => a.event_name)).size === 1) {
    for (const part of totals.get(own[0].event_name) ?? []) {
      const into = rows.get(part.variantId);
      const columns = own.map((a) => column(a, part));
      part.userIds.forEach((id, k) => {
        if (into && !left.has(id)) into.push(columns.map((c) => c[k]));
      });
    }
  } else {
    const users = new Map<string, number[]>();
    own.forEach((a, i) => {
      for (const part of totals.get(a.event_name) ?? []) {
        const values = column(a, part);
        part.userIds.forEach((id, k) => {
          if (left.has(id)) return;
          let row = users.get(id);
          if (!row) {
            users.set(id, (row = new Array<number>(own.length).fill(0)));
            rows.get(part.variantId)?.push(row);
          }
          row[i] = values[k];
        });
      }
    });
  }
  return variants.map((v) => ({ variantId: v.id, users: analysed.get(v.id) ?? 0, rows: rows.get(v.id)! }));
}

/**
 * Per metric naming a definition, the definition and the per-user values it reads: from a filled sink with the
 * assignments of its snapshot, else in one pass over the events for every definition (over ranges of users when
 * statements run at once, as a first computation's ordered passes; the rows add up).
 */
export async function definitionInputs(
  e: AnalysedExperiment, named: Named, reader: Pick<ReturnType<typeof createReader>, 'consistentRead'>, parallel: number,
  fromPasses?: { sink: UserTotalsSink; assignments: AssignmentDay[] },
): Promise<DefinitionInputs> {
  const out: DefinitionInputs = new Map();
  if (named.length === 0) return out;
  if (e.status === 'draft') {
    for (const n of named) out.set(n.metricId, { definition: n.definition, values: [] });
    return out;
  }
  const { totals, excluded } = fromPasses?.sink ?? {};
  if (totals && excluded) {
    const analysed = new Map<string, number>();
    for (const d of fromPasses!.assignments) analysed.set(d.variantId, (analysed.get(d.variantId) ?? 0) + d.users);
    for (const n of named) out.set(n.metricId, { definition: n.definition, values: valuesFromTotals(e.variants, n.definition, totals, excluded, analysed) });
    return out;
  }
  const { aggregates, columns } = combinedAggregates(named.map((n) => n.definition));
  const values = await reader.consistentRead(e, async (tx, _marks, left, fork): Promise<VariantUserValues[]> => {
      const ranges = parallel > 1 ? armStats.userRanges(await armStats.userSplits(tx, rangesFor(parallel))) : [{}];
      const parts: Array<Map<string, number[][]>> = [];
      let users = new Map<string, number>();
      await fork([
        async (t) => void (users = await armStats.analysedUsers(t, e.id, left)),
        ...ranges.map((range) => async (t: Executor) => void parts.push(await armStats.userValues(t, e.id, aggregates, left, range))),
      ]);
      return e.variants.map((v) => ({ variantId: v.id, users: users.get(v.id) ?? 0, rows: parts.flatMap((p) => p.get(v.id) ?? []) }));
    });
  for (const n of named) out.set(n.metricId, { definition: n.definition, values: projectUserValues(values, columns.get(n.definition.id)!) });
  return out;
}
