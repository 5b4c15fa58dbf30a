import { and, asc, count, eq, inArray, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { experiments, experimentVariants, type ExperimentStatus, type ExperimentType } from '../../db/schema/experiments.js';
import { featureFlags, type FlagStatus } from '../../db/schema/flags.js';
import { assignments, events } from '../../db/schema/tracking.js';
import type { Period } from './period.js';

/**
 * The export read model: read-only queries over the experiments, flags and tracking tables, paged by
 * (created_at, id) so an export of any size streams in constant memory. Nothing here writes.
 */
export const PAGE_SIZE = 500;

/** A page ends at this row; the next page starts after it. created_at travels as text to keep its microseconds. */
export interface Cursor {
  createdAt: string;
  id: string;
}

/** created_at as stored, in UTC and without an offset (spec rule 5), e.g. 2024-05-01T13:59:59.123456. */
const storedText = (column: AnyColumn) => sql<string>`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`;

function inPeriod(column: AnyColumn, period: Period): SQL | undefined {
  return and(
    period.start ? sql`${column} >= ${period.start}::timestamptz` : undefined,
    period.endInclusive ? sql`${column} <= ${period.endInclusive}::timestamptz` : undefined,
    period.endExclusive ? sql`${column} < ${period.endExclusive}::timestamptz` : undefined,
  );
}

function after(createdAt: AnyColumn, id: AnyColumn, cursor: Cursor | undefined): SQL | undefined {
  return cursor ? sql`(${createdAt}, ${id}) > ((${cursor.createdAt}::timestamp AT TIME ZONE 'UTC'), ${cursor.id}::uuid)` : undefined;
}

// Table names written out: Drizzle leaves columns unqualified in single-table selects, which a correlated
// subquery would read as its own table's columns.
const experimentColumns = {
  id: experiments.id,
  name: experiments.name,
  status: experiments.status,
  experimentType: experiments.experimentType,
  startDate: experiments.startDate,
  endDate: experiments.endDate,
  createdAt: storedText(experiments.createdAt),
  totalAssignments: sql<number>`(SELECT count(*)::int FROM assignments a WHERE a.experiment_id = experiments.id)`,
  // Tracked events only: the view rows that assignment writes are exposures, not events.
  totalEvents: sql<number>`(SELECT count(*)::int FROM events ev WHERE ev.experiment_id = experiments.id AND ev.kind = 'track')`,
};
export interface ExperimentRecord {
  id: string;
  name: string;
  status: ExperimentStatus;
  experimentType: ExperimentType;
  startDate: string | null;
  endDate: string | null;
  createdAt: string;
  totalAssignments: number;
  totalEvents: number;
}

export function experimentsPage(db: Executor, period: Period, cursor?: Cursor): Promise<ExperimentRecord[]> {
  return db
    .select(experimentColumns)
    .from(experiments)
    .where(and(inPeriod(experiments.createdAt, period), after(experiments.createdAt, experiments.id, cursor)))
    .orderBy(asc(experiments.createdAt), asc(experiments.id))
    .limit(PAGE_SIZE);
}

export async function findExperiment(db: Executor, id: string): Promise<ExperimentRecord | undefined> {
  const [row] = await db.select(experimentColumns).from(experiments).where(eq(experiments.id, id));
  return row;
}

/** Variants of these experiments in the order experiments list them (created_at, then id). */
export function variantsOf(db: Executor, experimentIds: string[]) {
  if (experimentIds.length === 0) return Promise.resolve([]);
  return db
    .select({ id: experimentVariants.id, experimentId: experimentVariants.experimentId, name: experimentVariants.name, isControl: experimentVariants.isControl })
    .from(experimentVariants)
    .where(inArray(experimentVariants.experimentId, experimentIds))
    .orderBy(asc(experimentVariants.createdAt), asc(experimentVariants.id));
}

const flagColumns = {
  id: featureFlags.id,
  key: featureFlags.key,
  name: featureFlags.name,
  status: featureFlags.status,
  rolloutPercentage: featureFlags.rolloutPercentage,
  createdAt: storedText(featureFlags.createdAt),
  updatedAt: storedText(featureFlags.updatedAt),
  totalEvaluations: sql<number>`(SELECT count(*)::int FROM events ev WHERE ev.feature_flag_id = feature_flags.id)`,
};
export interface FlagRecord {
  id: string;
  key: string;
  name: string;
  status: FlagStatus;
  rolloutPercentage: number;
  createdAt: string;
  updatedAt: string;
  totalEvaluations: number;
}

export function flagsPage(db: Executor, period: Period, cursor?: Cursor): Promise<FlagRecord[]> {
  return db
    .select(flagColumns)
    .from(featureFlags)
    .where(and(inPeriod(featureFlags.createdAt, period), after(featureFlags.createdAt, featureFlags.id, cursor)))
    .orderBy(asc(featureFlags.createdAt), asc(featureFlags.id))
    .limit(PAGE_SIZE);
}

/** Spec rule 4: the overview counts only what was created in the period. */
export async function overviewCounts(db: Executor, period: Period) {
  const [[exp], [flags], [assigned], [tracked]] = await Promise.all([
    db
      .select({
        total: count(),
        active: sql<number>`count(*) FILTER (WHERE ${experiments.status} = 'active')::int`,
        completed: sql<number>`count(*) FILTER (WHERE ${experiments.status} = 'completed')::int`,
        averageDurationDays: sql<number | null>`(avg(extract(epoch FROM (${experiments.endDate} - ${experiments.startDate}))) / 86400)::float8`,
      })
      .from(experiments)
      .where(inPeriod(experiments.createdAt, period)),
    db
      .select({ total: count(), active: sql<number>`count(*) FILTER (WHERE ${featureFlags.status} = 'ACTIVE')::int` })
      .from(featureFlags)
      .where(inPeriod(featureFlags.createdAt, period)),
    db.select({ total: count() }).from(assignments).where(inPeriod(assignments.createdAt, period)),
    db.select({ total: count() }).from(events).where(and(eq(events.kind, 'track'), inPeriod(events.createdAt, period))),
  ]);
  return { experiments: exp, flags, assignments: assigned.total, events: tracked.total };
}
