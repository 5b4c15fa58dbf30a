/**
 * Pieces shared by tracking's aggregate statements (arm-stats.ts, user-values.ts): the planner settings of the ordered
 * passes, the probe for untagged events, and the exclusion of users with a conflicting exposure.
 */
import { sql, type SQL } from 'drizzle-orm';
import { queryRows, type Executor } from '../../db/client.js';
import { untaggedEventsExist } from './counting.js';

/**
 * Planner settings for a statement over `deltas` from the start, for just that statement. The merge join of the
 * ordered streams is what makes it fast: costed on estimates, the planner prefers hashing a million text keys, or
 * probing the assignments once per event (hash joins and nested loops off). Parallel workers would each read the
 * whole ordered stream again beside their share of the assignments (none).
 */
const ORDERED_PLAN: Array<[string, string]> = [['enable_hashjoin', 'off'], ['enable_nestloop', 'off'], ['max_parallel_workers_per_gather', '0']];

export async function mergeOrdered<T>(tx: Executor, ordered: boolean, run: () => Promise<T>): Promise<T> {
  if (!ordered) return run();
  const [{ before }] = await queryRows<{ before: string[] }>(tx, sql`
    SELECT array[${sql.join(ORDERED_PLAN.map(([name]) => sql`current_setting(${name})`), sql`, `)}] AS before,
           ${sql.join(ORDERED_PLAN.map(([name, value]) => sql`set_config(${name}, ${value}, true)`), sql`, `)}`);
  const out = await run();
  await tx.execute(sql`SELECT ${sql.join(ORDERED_PLAN.map(([name], i) => sql`set_config(${name}, ${before[i]}, true)`), sql`, `)}`);
  return out;
}

/** Whether untagged counted events of the metrics exist up to `upTo`: when none, reads of them take one stream. */
export async function untaggedBefore(db: Executor, eventNames: string[], upTo: Date | null): Promise<boolean> {
  const [{ found }] = await queryRows<{ found: boolean }>(db, untaggedEventsExist(eventNames, upTo));
  return found;
}

/** Leaves the excluded users out of a relation with a user_id column. */
export const notExcluded = (column: SQL, excluded: string[]): SQL =>
  excluded.length === 0 ? sql`TRUE` : sql`NOT (${column} = ANY(${sql.param(excluded)}::text[]))`;
