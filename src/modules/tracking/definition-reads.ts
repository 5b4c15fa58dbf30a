/**
 * Per-user values of metric library definitions' aggregates as the analyses beside the results payload read them, by
 * the counting rule of counting.ts (the same relations as arm-stats.ts): with each user's pre-exposure covariate
 * (CUPED), by assignment-context value (segmented results) and by UTC day (daily results). The results payload's own
 * read is arm-stats.ts's userValues. Each returns, per variant (and segment or day), one row per user with at least one
 * counted event (or, for CUPED, pre-exposure history), in the aggregates' order; users without a row have 0 for each.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { EventAggregate } from '../../analysis/types.js';
import { queryRows, type Executor } from '../../db/client.js';
import type { CovariateKind } from './arm-stats.js';
import { ALL_TIME, assignmentSegments, countedEventsPerUserDay, experimentAssignments, preExposureTotals } from './counting.js';

const notExcluded = (column: SQL, excluded: string[]): SQL =>
  excluded.length === 0 ? sql`TRUE` : sql`NOT (${column} = ANY(${sql.param(excluded)}::text[]))`;

/** The aggregates as columns v0, v1, … of a grouping of countedEventsPerUserDay rows. */
const aggregateColumns = (aggregates: EventAggregate[]): SQL =>
  sql.join(aggregates.map((a, i) => sql`coalesce(sum(${a.aggregate === 'count' ? sql`event_count` : sql`value_sum`})
    FILTER (WHERE event_name = ${a.event_name}), 0)::float8 AS ${sql.raw(`v${i}`)}`), sql`, `);

const namesOf = (aggregates: EventAggregate[]) => [...new Set(aggregates.map((a) => a.event_name))];
const valuesOf = (r: Record<string, unknown>, aggregates: EventAggregate[]) => aggregates.map((_, i) => Number(r[`v${i}`]));

function group<K>(rows: Array<{ key: K; values: number[] }>): Map<K, number[][]> {
  const out = new Map<K, number[][]>();
  for (const r of rows) {
    const list = out.get(r.key);
    if (list) list.push(r.values);
    else out.set(r.key, [r.values]);
  }
  return out;
}

const COVARIATE: Record<CovariateKind, SQL> = { indicator: sql`1.0`, count: sql`event_count::float8`, value: sql`value_sum` };

/**
 * CUPED: per variant id, rows [aggregates…, covariate, has history (0/1)] for the analysed users with a counted event
 * of the aggregates or pre-exposure events of the covariate (counted as its metric type counts, as cupedSums).
 */
export async function userValuesWithCovariate(
  db: Executor, experimentId: string, aggregates: EventAggregate[], covariateEvent: string, covariate: CovariateKind, excluded: string[],
): Promise<Map<string, number[][]>> {
  const rows = await queryRows<Record<string, unknown> & { variant_id: string; cov: number; has_history: boolean }>(db, sql`
    SELECT a.variant_id, u.*, coalesce(x.cov, 0)::float8 AS cov, (x.user_id IS NOT NULL) AS has_history
    FROM (${experimentAssignments(experimentId)}) a
    LEFT JOIN (SELECT user_id AS uid, ${aggregateColumns(aggregates)}
               FROM (${countedEventsPerUserDay(experimentId, namesOf(aggregates), ALL_TIME)}) e GROUP BY user_id) u ON u.uid = a.user_id
    LEFT JOIN (SELECT user_id, ${COVARIATE[covariate]} AS cov FROM (${preExposureTotals(experimentId, covariateEvent)}) p) x ON x.user_id = a.user_id
    WHERE ${notExcluded(sql`a.user_id`, excluded)} AND (u.uid IS NOT NULL OR x.user_id IS NOT NULL)`);
  return group(rows.map((r) => ({
    key: r.variant_id,
    values: [...aggregates.map((_, i) => Number(r[`v${i}`] ?? 0)), Number(r.cov), r.has_history ? 1 : 0],
  })));
}

/** Segmented results: per segment value (null: attribute absent), per variant id, the rows of users with events. */
export async function userValuesBySegment(
  db: Executor, experimentId: string, attribute: string, aggregates: EventAggregate[], excluded: string[],
): Promise<Map<string | null, Map<string, number[][]>>> {
  const rows = await queryRows<Record<string, unknown> & { segment: string | null; variant_id: string }>(db, sql`
    SELECT s.segment, s.variant_id, ${aggregateColumns(aggregates)}
    FROM (${assignmentSegments(experimentId, attribute)}) s
    JOIN (${countedEventsPerUserDay(experimentId, namesOf(aggregates), ALL_TIME)}) e ON e.user_id = s.user_id
    WHERE ${notExcluded(sql`s.user_id`, excluded)}
    GROUP BY s.user_id, s.segment, s.variant_id`);
  const out = new Map<string | null, Map<string, number[][]>>();
  for (const r of rows) {
    let bySegment = out.get(r.segment);
    if (!bySegment) out.set(r.segment, (bySegment = new Map()));
    const list = bySegment.get(r.variant_id) ?? [];
    list.push(valuesOf(r, aggregates));
    bySegment.set(r.variant_id, list);
  }
  return out;
}

/** Daily results: per variant id, one row per user and UTC day with events: (user, day, values that day). */
export async function userValueDays(
  db: Executor, experimentId: string, aggregates: EventAggregate[], excluded: string[],
): Promise<Map<string, Array<{ user: string; day: string; values: number[] }>>> {
  const rows = await queryRows<Record<string, unknown> & { variant_id: string; user_id: string; day: string | Date }>(db, sql`
    SELECT e.variant_id, e.user_id, e.day::text AS day, ${aggregateColumns(aggregates)}
    FROM (${countedEventsPerUserDay(experimentId, namesOf(aggregates), ALL_TIME)}) e
    WHERE ${notExcluded(sql`e.user_id`, excluded)}
    GROUP BY e.variant_id, e.user_id, e.day`);
  const out = new Map<string, Array<{ user: string; day: string; values: number[] }>>();
  for (const r of rows) {
    const list = out.get(r.variant_id) ?? [];
    list.push({ user: r.user_id, day: String(r.day).slice(0, 10), values: valuesOf(r, aggregates) });
    out.set(r.variant_id, list);
  }
  return out;
}
