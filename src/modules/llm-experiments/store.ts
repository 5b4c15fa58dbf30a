import { and, asc, count, eq, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { llmOutputs, type LlmOutputRow } from '../../db/schema/llm-experiments.js';

export async function insertOutputs(db: Executor, rows: (typeof llmOutputs.$inferInsert)[]): Promise<void> {
  await db.insert(llmOutputs).values(rows);
}

/** Outputs to judge, oldest first: those never judged, or every output when re-judging. */
export function outputsToJudge(db: Executor, experimentId: string, rejudge: boolean, limit: number): Promise<LlmOutputRow[]> {
  return db
    .select()
    .from(llmOutputs)
    .where(and(eq(llmOutputs.experimentId, experimentId), rejudge ? undefined : isNull(llmOutputs.judgedAt)))
    .orderBy(asc(llmOutputs.createdAt), asc(llmOutputs.id))
    .limit(limit);
}

export async function countUnjudged(db: Executor, experimentId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(llmOutputs)
    .where(and(eq(llmOutputs.experimentId, experimentId), isNull(llmOutputs.judgedAt)));
  return row.n;
}

export async function saveJudgement(
  db: Executor,
  id: string,
  judgement: { autoEvalScore: number | null; autoEvalError: string | null; autoEvalReasoning: string | null; judgedAt: Date },
): Promise<void> {
  await db.update(llmOutputs).set(judgement).where(eq(llmOutputs.id, id));
}

/** Per variant: outputs, judged and scored outputs, and the scores' mean, sample variance and range. */
export function variantStats(db: Executor, experimentId: string) {
  const score = llmOutputs.autoEvalScore;
  return db
    .select({
      variantName: llmOutputs.variantName,
      outputs: count(),
      judged: count(llmOutputs.judgedAt),
      scored: count(score),
      mean: sql<number | null>`avg(${score})`.mapWith((v) => (v === null ? null : Number(v))),
      variance: sql<number | null>`var_samp(${score})`.mapWith((v) => (v === null ? null : Number(v))),
      min: sql<number | null>`min(${score})`.mapWith((v) => (v === null ? null : Number(v))),
      max: sql<number | null>`max(${score})`.mapWith((v) => (v === null ? null : Number(v))),
    })
    .from(llmOutputs)
    .where(eq(llmOutputs.experimentId, experimentId))
    .groupBy(llmOutputs.variantName)
    .orderBy(asc(llmOutputs.variantName));
}
