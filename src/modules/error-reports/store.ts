import { and, asc, desc, eq, gt, isNotNull, lte, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { errorReports, type ErrorReportRow } from '../../db/schema/error-reports.js';

export async function insertReports(db: Executor, values: Array<typeof errorReports.$inferInsert>): Promise<ErrorReportRow[]> {
  if (values.length === 0) return [];
  return db.insert(errorReports).values(values).returning();
}

export interface ErrorCounts {
  counted: number;
  uncounted: number;
}

const countedSum = sql<number>`count(*) filter (where ${errorReports.counted})`.mapWith(Number);
const uncountedSum = sql<number>`count(*) filter (where not ${errorReports.counted})`.mapWith(Number);
const inWindow = (since: Date, until: Date) => and(gt(errorReports.createdAt, since), lte(errorReports.createdAt, until));

/** Reports of one flag created in (since, until]. */
export async function countsForFlag(db: Executor, flagId: string, since: Date, until: Date): Promise<ErrorCounts> {
  const [row] = await db
    .select({ counted: countedSum, uncounted: uncountedSum })
    .from(errorReports)
    .where(and(eq(errorReports.flagId, flagId), inWindow(since, until)));
  return row ?? { counted: 0, uncounted: 0 };
}

/** Every report created in (since, until], in total and per flag (most counted errors first). */
export async function countsInWindow(db: Executor, since: Date, until: Date, flagLimit: number) {
  const [[total], perFlag] = await Promise.all([
    db.select({ counted: countedSum, uncounted: uncountedSum }).from(errorReports).where(inWindow(since, until)),
    db
      .select({ flagId: sql<string>`${errorReports.flagId}`, counted: countedSum, uncounted: uncountedSum })
      .from(errorReports)
      .where(and(isNotNull(errorReports.flagId), inWindow(since, until)))
      .groupBy(errorReports.flagId)
      .orderBy(desc(countedSum), desc(uncountedSum), asc(errorReports.flagId))
      .limit(flagLimit),
  ]);
  return { total: { counted: total?.counted ?? 0, uncounted: total?.uncounted ?? 0 }, perFlag };
}
