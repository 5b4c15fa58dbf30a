import { and, asc, desc, eq, ilike, inArray, isNotNull, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import {
  experimentMetrics,
  experiments,
  experimentVariants,
  type ExperimentRow,
  type MetricRow,
  type VariantRow,
} from '../../db/schema/experiments.js';
import type { ExperimentStatus } from './domain.js';
import type { SortField } from './schemas.js';
import { containsPattern } from '../../db/errors.js';
import { afterCursor, inPeriod, storedText, STREAM_PAGE_SIZE, type CreatedPeriod, type Cursor } from '../../db/paging.js';

export type ExperimentInsert = typeof experiments.$inferInsert;
export type ExperimentChange = Partial<Omit<ExperimentInsert, 'id'>>;

export async function insertExperiment(db: Executor, values: ExperimentInsert): Promise<ExperimentRow> {
  const [row] = await db.insert(experiments).values(values).returning();
  return row;
}

export async function findExperiment(db: Executor, id: string): Promise<ExperimentRow | undefined> {
  const [row] = await db.select().from(experiments).where(eq(experiments.id, id));
  return row;
}

/** Row lock: concurrent changes and transitions of one experiment take turns. */
export async function lockExperiment(db: Executor, id: string): Promise<ExperimentRow | undefined> {
  const [row] = await db.select().from(experiments).where(eq(experiments.id, id)).for('update');
  return row;
}

export async function findExperimentByKey(db: Executor, key: string): Promise<ExperimentRow | undefined> {
  const [row] = await db.select().from(experiments).where(eq(experiments.key, key));
  return row;
}

/** Keys among `candidates` already used by an experiment. */
export async function takenKeys(db: Executor, candidates: string[]): Promise<Set<string>> {
  if (candidates.length === 0) return new Set();
  const rows = await db.select({ key: experiments.key }).from(experiments).where(inArray(experiments.key, candidates));
  return new Set(rows.map((r) => r.key));
}

export async function updateExperiment(db: Executor, id: string, values: ExperimentChange): Promise<ExperimentRow> {
  const [row] = await db.update(experiments).set(values).where(eq(experiments.id, id)).returning();
  return row;
}

/**
 * Completes an experiment ending at `endDate`. A start_date after the end (started early by an older version) is
 * set one microsecond before it, in SQL because JavaScript dates stop at milliseconds.
 */
export async function completeExperiment(db: Executor, id: string, endDate: string, updatedAt: Date): Promise<ExperimentRow> {
  const end = sql`${endDate}::timestamptz`;
  const [row] = await db
    .update(experiments)
    .set({
      status: 'completed',
      endDate: end,
      startDate: sql`CASE WHEN ${experiments.startDate} > ${end} THEN ${end} - interval '1 microsecond' ELSE ${experiments.startDate} END`,
      updatedAt,
    })
    .where(eq(experiments.id, id))
    .returning();
  return row;
}

export async function deleteExperiment(db: Executor, id: string): Promise<void> {
  await db.delete(experiments).where(eq(experiments.id, id));
}

export async function insertVariants(db: Executor, rows: (typeof experimentVariants.$inferInsert)[]): Promise<void> {
  if (rows.length) await db.insert(experimentVariants).values(rows);
}

export async function insertMetrics(db: Executor, rows: (typeof experimentMetrics.$inferInsert)[]): Promise<void> {
  if (rows.length) await db.insert(experimentMetrics).values(rows);
}

export async function deleteVariants(db: Executor, experimentId: string): Promise<void> {
  await db.delete(experimentVariants).where(eq(experimentVariants.experimentId, experimentId));
}

export async function deleteMetrics(db: Executor, experimentId: string): Promise<void> {
  await db.delete(experimentMetrics).where(eq(experimentMetrics.experimentId, experimentId));
}

/** Variants of these experiments in creation order (spec: ordered by created_at then id). */
export function listVariants(db: Executor, experimentIds: string[]): Promise<VariantRow[]> {
  if (experimentIds.length === 0) return Promise.resolve([]);
  return db
    .select()
    .from(experimentVariants)
    .where(inArray(experimentVariants.experimentId, experimentIds))
    .orderBy(asc(experimentVariants.createdAt), asc(experimentVariants.id));
}

export function listMetrics(db: Executor, experimentIds: string[]): Promise<MetricRow[]> {
  if (experimentIds.length === 0) return Promise.resolve([]);
  return db
    .select()
    .from(experimentMetrics)
    .where(inArray(experimentMetrics.experimentId, experimentIds))
    .orderBy(asc(experimentMetrics.createdAt), asc(experimentMetrics.id));
}

const SORT_COLUMNS = {
  created_at: experiments.createdAt,
  updated_at: experiments.updatedAt,
  name: experiments.name,
  key: experiments.key,
  status: experiments.status,
  start_date: experiments.startDate,
  end_date: experiments.endDate,
} as const;

/** `%` and `_` in a search are literal characters, not patterns. */

export function listExperiments(
  db: Executor,
  q: { status?: ExperimentStatus; search?: string; sortBy: SortField; sortOrder: 'asc' | 'desc'; skip: number; limit: number },
): Promise<ExperimentRow[]> {
  const filters: SQL[] = [];
  if (q.status) filters.push(eq(experiments.status, q.status));
  if (q.search) {
    const pattern = containsPattern(q.search);
    filters.push(or(ilike(experiments.name, pattern), ilike(experiments.key, pattern), ilike(experiments.description, pattern))!);
  }
  const order = q.sortOrder === 'asc' ? asc : desc;
  return db
    .select()
    .from(experiments)
    .where(and(...filters))
    .orderBy(order(SORT_COLUMNS[q.sortBy]), order(experiments.id))
    .offset(q.skip)
    .limit(q.limit);
}

/** Ids of experiments in `status` whose `column` date is at or before `now`: the scheduler's work list. */
export async function dueIds(db: Executor, status: ExperimentStatus, column: 'startDate' | 'endDate', now: string): Promise<string[]> {
  const rows = await db
    .select({ id: experiments.id })
    .from(experiments)
    .where(and(eq(experiments.status, status), isNotNull(experiments[column]), lte(experiments[column], now)))
    .orderBy(asc(experiments[column]));
  return rows.map((r) => r.id);
}

/** Candidates whose stored rules mention `text` anywhere; the caller checks the rules themselves. */
export function experimentsWithRulesMentioning(db: Executor, statuses: ExperimentStatus[], text: string): Promise<ExperimentRow[]> {
  return db
    .select()
    .from(experiments)
    .where(
      and(
        inArray(experiments.status, statuses),
        isNotNull(experiments.targetingRules),
        sql`strpos(${experiments.targetingRules}::text, ${text}) > 0`,
      ),
    )
    .orderBy(asc(experiments.createdAt), asc(experiments.id));
}

/** Id, key, name and status of the experiments with a metric naming the metric definition, oldest first. */
export function experimentsUsingMetricDefinition(
  db: Executor,
  definitionId: string,
): Promise<Pick<ExperimentRow, 'id' | 'key' | 'name' | 'status' | 'createdAt'>[]> {
  return db
    .selectDistinct({ id: experiments.id, key: experiments.key, name: experiments.name, status: experiments.status, createdAt: experiments.createdAt })
    .from(experiments)
    .innerJoin(experimentMetrics, eq(experimentMetrics.experimentId, experiments.id))
    .where(eq(experimentMetrics.metricDefinitionId, definitionId))
    .orderBy(asc(experiments.createdAt), asc(experiments.id));
}

export function findExperiments(db: Executor, ids: string[]): Promise<ExperimentRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.select().from(experiments).where(inArray(experiments.id, ids));
}

/** The experiment a variant belongs to (tracking: events recorded by variant id). */
export async function experimentIdOfVariant(db: Executor, variantId: string): Promise<string | undefined> {
  const [row] = await db
    .select({ experimentId: experimentVariants.experimentId })
    .from(experimentVariants)
    .where(eq(experimentVariants.id, variantId));
  return row?.experimentId;
}

/** Stores the computed Bayesian decision without touching updated_at (it is a result, not an edit). */
export async function setBayesianDecision(db: Executor, id: string, decision: ExperimentRow['bayesianDecision']): Promise<void> {
  await db.update(experiments).set({ bayesianDecision: decision }).where(eq(experiments.id, id));
}

/** Read model for export: one page of experiments created in the period, in (created_at, id) order. */
export interface ExperimentExportRecord {
  id: string;
  name: string;
  status: ExperimentStatus;
  experimentType: ExperimentRow['experimentType'];
  startDate: string | null;
  endDate: string | null;
  createdAt: string;
}

const exportColumns = {
  id: experiments.id,
  name: experiments.name,
  status: experiments.status,
  experimentType: experiments.experimentType,
  startDate: experiments.startDate,
  endDate: experiments.endDate,
  createdAt: storedText(experiments.createdAt),
};

export function exportPage(db: Executor, period: CreatedPeriod, cursor?: Cursor): Promise<ExperimentExportRecord[]> {
  return db
    .select(exportColumns)
    .from(experiments)
    .where(and(inPeriod(experiments.createdAt, period), afterCursor(experiments.createdAt, experiments.id, cursor)))
    .orderBy(asc(experiments.createdAt), asc(experiments.id))
    .limit(STREAM_PAGE_SIZE);
}

export async function findExportRecord(db: Executor, id: string): Promise<ExperimentExportRecord | undefined> {
  const [row] = await db.select(exportColumns).from(experiments).where(eq(experiments.id, id));
  return row;
}

/** Variants of these experiments in the order experiments list them (created_at, then id). */
export function exportVariants(db: Executor, experimentIds: string[]) {
  if (experimentIds.length === 0) return Promise.resolve([]);
  return db
    .select({ id: experimentVariants.id, experimentId: experimentVariants.experimentId, name: experimentVariants.name, isControl: experimentVariants.isControl })
    .from(experimentVariants)
    .where(inArray(experimentVariants.experimentId, experimentIds))
    .orderBy(asc(experimentVariants.createdAt), asc(experimentVariants.id));
}

/** Spec export rule 4: counts of what was created in the period. */
export async function periodSummary(db: Executor, period: CreatedPeriod) {
  const [row] = await db
    .select({
      total: sql<number>`count(*)::int`,
      active: sql<number>`count(*) FILTER (WHERE ${experiments.status} = 'active')::int`,
      completed: sql<number>`count(*) FILTER (WHERE ${experiments.status} = 'completed')::int`,
      averageDurationDays: sql<number | null>`(avg(extract(epoch FROM (${experiments.endDate} - ${experiments.startDate}))) / 86400)::float8`,
    })
    .from(experiments)
    .where(inPeriod(experiments.createdAt, period));
  return row;
}
