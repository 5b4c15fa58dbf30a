/**
 * The per-user values of the metric library's definitions named by an experiment's metrics, by tracking's counting
 * rule. A first computation reads them from the metrics' own passes from the start (`UserTotalsSink`: each user's
 * totals at the end of the pass, one snapshot with the day deltas) when every event they read is a metric's event;
 * otherwise (rolled-up metrics, events no metric names, a cached snapshot) they are read in a pass of their own.
 */
import { aggregatesOf, combinedAggregates, projectUserValues } from '../../analysis/definitions.js';
import type { DefinitionInputs } from '../../analysis/payload.js';
import type { AssignmentDay, DefinitionSettings, EventAggregate, VariantUserColumns, VariantUserValues } from '../../analysis/types.js';
import type { Executor } from '../../db/client.js';
import { armStats, type UserTotals } from '../tracking/read-model.js';
import { namedMetrics } from './definition-loads.js';
import type { AnalysedExperiment } from './experiment.js';
import type { createReader, RangeTotals, UserTotalsSink } from './read.js';
import { rangesFor } from './rollup.js';

type Named = Array<{ metricId: string; definition: DefinitionSettings }>;

/** The metrics that name one of `definitions`, each with it. */
export const namedDefinitions = (e: AnalysedExperiment, definitions: DefinitionSettings[]): Named =>
  namedMetrics(e, definitions).map(({ metric, definition }) => ({ metricId: metric.id, definition }));

/**
 * What a snapshot read should gather for these definitions: every event their aggregates read, with sums if one
 * sums, and with user ids if a definition of two events reads it (to pair each user's two totals).
 */
export function sinkFor(e: AnalysedExperiment, named: Named): UserTotalsSink | undefined {
  if (named.length === 0 || e.status === 'draft') return undefined;
  const wanted = new Map<string, { sums: boolean; ids: boolean }>();
  for (const { definition } of named) {
    const own = aggregatesOf(definition);
    const paired = new Set(own.map((a) => a.event_name)).size > 1;
    for (const a of own) {
      const before = wanted.get(a.event_name);
      wanted.set(a.event_name, { sums: before?.sums === true || a.aggregate === 'sum', ids: before?.ids === true || paired });
    }
  }
  return { wanted };
}

/** Indices below 2^21 beside a 32-bit hash in one float64 (2^53): the sort key of pairIds. */
const SPAN = 2 ** 21;

/** FNV-1a over a string's UTF-16 code units: 32 bits. */
function hashOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i += 1) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** hash * SPAN + index of every id, sorted: the same id in two lists has the same hash, so runs of a hash align. */
function sortedKeys(ids: readonly string[]): Float64Array {
  const keys = new Float64Array(ids.length);
  for (let k = 0; k < ids.length; k += 1) keys[k] = hashOf(ids[k]) * SPAN + k;
  return keys.sort();
}

/**
 * Visits each id of two lists of distinct ids once: (i, j) for an id at a[i] and b[j], (i, -1) or (-1, j) for one in
 * one list only. By sorted hashes (a typed-array sort and one merge: far cheaper than a Map of a million ids), ids of
 * one hash compared as strings, so that a collision pairs nobody wrongly.
 */
export function pairIds(a: readonly string[], b: readonly string[], visit: (i: number, j: number) => void): void {
  if (a.length >= SPAN || b.length >= SPAN) {
    const at = new Map(a.map((id, i) => [id, i]));
    b.forEach((id, j) => visit(at.get(id) ?? -1, j));
    const seen = new Set(b);
    a.forEach((id, i) => void (seen.has(id) || visit(i, -1)));
    return;
  }
  const ka = sortedKeys(a);
  const kb = sortedKeys(b);
  const hash = (keys: Float64Array, p: number) => (p < keys.length ? Math.floor(keys[p] / SPAN) : Infinity);
  let i = 0;
  let j = 0;
  while (i < ka.length || j < kb.length) {
    const h = Math.min(hash(ka, i), hash(kb, j));
    let i2 = i;
    while (hash(ka, i2) === h) i2 += 1;
    let j2 = j;
    while (hash(kb, j2) === h) j2 += 1;
    if (i2 - i <= 1 && j2 - j <= 1) {
      // Almost always: one id in one list, or in both.
      const x = i2 > i ? ka[i] % SPAN : -1;
      const y = j2 > j ? kb[j] % SPAN : -1;
      if (x >= 0 && y >= 0 && a[x] !== b[y]) {
        visit(x, -1);
        visit(-1, y);
      } else visit(x, y);
      i = i2;
      j = j2;
      continue;
    }
    // A collision of hashes: every pair of the two runs is compared.
    const matched: number[] = [];
    for (let p = i; p < i2; p += 1) {
      const x = ka[p] % SPAN;
      let found = -1;
      for (let q = j; q < j2 && found < 0; q += 1) if (b[kb[q] % SPAN] === a[x]) found = q;
      if (found >= 0) matched.push(found);
      visit(x, found < 0 ? -1 : kb[found] % SPAN);
    }
    for (let q = j; q < j2; q += 1) if (!matched.includes(q)) visit(-1, kb[q] % SPAN);
    i = i2;
    j = j2;
  }
}

/**
 * One definition's per-user values from the passes' user totals (the excluded already left out), as
 * `projectUserValues` gives them from a read of its own, in columns: per variant, for each user with a counted event
 * of one of its events, its aggregates in order (0 for an event the user has none of). A definition of one event
 * needs no pairing of users.
 */
export function valuesFromTotals(
  variants: ReadonlyArray<{ id: string }>, d: DefinitionSettings, totals: Map<string, RangeTotals[]>, analysed: Map<string, number>,
): VariantUserColumns[] {
  const own = aggregatesOf(d);
  const column = (a: EventAggregate, part: UserTotals) => (a.aggregate === 'count' ? part.counts : part.sums!);
  const parts = (name: string) => totals.get(name) ?? [];
  // Per variant, its columns filled up to `length`, as long as its users in all the events' totals at most.
  const capacity = new Map<string, number>();
  for (const name of new Set(own.map((a) => a.event_name))) {
    for (const part of parts(name)) capacity.set(part.variantId, (capacity.get(part.variantId) ?? 0) + part.counts.length);
  }
  const arms = new Map(variants.map((v) => [v.id, { length: 0, columns: own.map(() => new Float64Array(capacity.get(v.id) ?? 0)) }]));
  if (new Set(own.map((a) => a.event_name)).size === 1) {
    for (const part of parts(own[0].event_name)) {
      const arm = arms.get(part.variantId);
      if (!arm) continue;
      own.forEach((a, i) => arm.columns[i].set(column(a, part), arm.length));
      arm.length += part.counts.length;
    }
  } else {
    // A ratio of two events: each user is in each event's totals once (at their last event), in the pass over their
    // range of users; their two totals are paired by id within each range and variant.
    const groups = new Map<string, { variantId: string; ids: [string[], string[]]; values: [number[], number[]] }>();
    own.forEach((a, i) => {
      for (const part of parts(a.event_name)) {
        const key = `${part.range} ${part.variantId}`;
        let group = groups.get(key);
        if (!group) groups.set(key, (group = { variantId: part.variantId, ids: [[], []], values: [[], []] }));
        const values = column(a, part);
        for (let k = 0; k < values.length; k += 1) {
          group.ids[i].push(part.userIds![k]);
          group.values[i].push(values[k]);
        }
      }
    });
    for (const { variantId, ids, values: [x, y] } of groups.values()) {
      const arm = arms.get(variantId);
      if (arm) pairIds(ids[0], ids[1], (i, j) => {
        arm.columns[0][arm.length] = i < 0 ? 0 : x[i];
        arm.columns[1][arm.length] = j < 0 ? 0 : y[j];
        arm.length += 1;
      });
    }
  }
  return variants.map((v) => {
    const { length, columns } = arms.get(v.id)!;
    return { variantId: v.id, users: analysed.get(v.id) ?? 0, columns: columns.map((c) => c.subarray(0, length)) };
  });
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
    for (const n of named) out.set(n.metricId, { definition: n.definition, values: valuesFromTotals(e.variants, n.definition, totals, analysed) });
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
