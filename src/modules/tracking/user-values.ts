/** The metric library's per-user values read on their own (when no pass from the start reads them for the results). */
import { sql } from 'drizzle-orm';
import type { EventAggregate } from '../../analysis/types.js';
import { queryRows, type Executor } from '../../db/client.js';
import { countedEventsInUserOrder, experimentAssignments, type UserRange } from './counting.js';
import { mergeOrdered, notExcluded, untaggedBefore } from './ordered.js';

/** Analysed users per variant: the assigned users less the `excluded` (users with a conflicting exposure). */
export async function analysedUsers(db: Executor, experimentId: string, excluded: string[]): Promise<Map<string, number>> {
  const rows = await queryRows<{ variant_id: string; users: number }>(db, sql`
    SELECT a.variant_id, count(*)::bigint AS users FROM (${experimentAssignments(experimentId)}) a
    WHERE ${notExcluded(sql`a.user_id`, excluded)} GROUP BY a.variant_id`);
  return new Map(rows.map((r) => [r.variant_id, Number(r.users)]));
}

/**
 * Per-user values of several per-user aggregates (count or value sum of one event each) over all time, by the counting
 * rule, the `excluded` users left out, for users in `range` (passes over disjoint ranges can run at once): per variant
 * id, one row of values per user with at least one counted event of the aggregates' events, in the aggregates' order
 * (users without a row have 0 for each; `analysedUsers` counts every user). For the metric library's definitions
 * (mean with capping, ratio, quantile), whose statistics need every user's value. Each event's stream comes in user
 * order from the index (the ordered pass of metricDeltas) and is totalled per user without a sort.
 */
export async function userValues(
  db: Executor, experimentId: string, aggregates: EventAggregate[], excluded: string[], range: UserRange = {},
): Promise<Map<string, number[][]>> {
  const names = [...new Set(aggregates.map((a) => a.event_name))];
  const columns = sql.join(aggregates.map((a, i) => sql`coalesce(sum(${a.aggregate === 'count' ? sql`event_count` : sql`value_sum`})
    FILTER (WHERE event_name = ${a.event_name}), 0)::float8 AS ${sql.raw(`v${i}`)}`), sql`, `);
  const untagged = await untaggedBefore(db, names, null);
  const perUser = sql.join(names.map((name) => sql`
    SELECT event_name, user_id, variant_id, count(*)::float8 AS event_count, coalesce(sum(value), 0)::float8 AS value_sum
    FROM (${countedEventsInUserOrder(experimentId, name, null, { untagged, range })}) c GROUP BY event_name, user_id, variant_id`), sql` UNION ALL `);
  const values = await mergeOrdered(db, true, () => queryRows<Record<string, number> & { variant_id: string }>(db, sql`
    SELECT variant_id, ${columns}
    FROM (${perUser}) e
    WHERE ${notExcluded(sql`e.user_id`, excluded)}
    GROUP BY user_id, variant_id`));
  const out = new Map<string, number[][]>();
  for (const r of values) {
    let rows = out.get(r.variant_id);
    if (!rows) out.set(r.variant_id, (rows = []));
    rows.push(aggregates.map((_, i) => Number(r[`v${i}`])));
  }
  return out;
}
