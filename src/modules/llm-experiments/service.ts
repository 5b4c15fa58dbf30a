import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { LlmOutputRow } from '../../db/schema/llm-experiments.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { ServiceUnavailable, Unprocessable } from '../../platform/errors.js';
import { extractJsonObject, type LlmClient } from '../../platform/llm.js';
import { welchTTest, type SampleSummary } from '../../stats/index.js';
import type { ExperimentFacts } from '../ai/service.js';
import type { JudgeQuery, JudgeSummary, LlmResults, OutputsCreate } from './schemas.js';
import * as store from './store.js';

export const NO_LLM_CONFIGURED = 'No language model is configured (LLM_API_URL and LLM_API_KEY)';
export const UNKNOWN_VARIANT = "variant_name must name one of the experiment's variants";
/** Judging calls in flight at once for one request. */
const JUDGE_CONCURRENCY = 4;

export type JudgeError = 'call_failed' | 'no_score';

/** The score in a judge's reply: a JSON object whose `score` is a number from 0 to 1. */
export function readJudgement(reply: string): { score: number; reasoning: string | null } | undefined {
  const json = extractJsonObject(reply);
  const score = json?.score;
  if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) return undefined;
  return { score, reasoning: typeof json?.reasoning === 'string' ? json.reasoning.slice(0, 2000) : null };
}

/** Cohen's d with the pooled standard deviation; null when it is zero or there are too few scores. */
function cohensD(control: SampleSummary, treatment: SampleSummary): number | null {
  const df = control.n + treatment.n - 2;
  if (df <= 0) return null;
  const pooled = Math.sqrt(((control.n - 1) * control.variance + (treatment.n - 1) * treatment.variance) / df);
  return pooled > 0 ? (treatment.mean - control.mean) / pooled : null;
}

export interface LlmExperimentsDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  llm: LlmClient | undefined;
  /** The experiment; rejects with a 404 when there is none with that id. */
  experiment(id: string): Promise<ExperimentFacts>;
}

export type LlmExperimentsService = ReturnType<typeof createLlmExperimentsService>;

/**
 * Outputs of an experiment's variants scored by a language model acting as judge. Spec, LLM judge: a failed call or
 * a reply with no JSON score from 0 to 1 stores no score (error call_failed or no_score); results leave unscored
 * evaluations out and count them; p_value and effect_size are null when neither variant's scores vary.
 */
export function createLlmExperimentsService(deps: LlmExperimentsDeps) {
  const { db } = deps;

  async function judgeOne(llm: LlmClient, row: LlmOutputRow, criteria: string | undefined): Promise<JudgeError | null> {
    const reply = await llm.complete([
      {
        role: 'system',
        content:
          'You are an impartial judge of AI assistant answers. Score the answer from 0 (useless or wrong) to 1 ' +
          '(excellent). Reply with one JSON object: {"score": <number from 0 to 1>, "reasoning": "<one sentence>"}.',
      },
      {
        role: 'user',
        content: JSON.stringify({ criteria: criteria ?? 'helpful, correct, clear and safe', prompt: row.prompt, answer: row.output }),
      },
    ]);
    const judgement = reply === undefined ? undefined : readJudgement(reply);
    const error: JudgeError | null = reply === undefined ? 'call_failed' : judgement ? null : 'no_score';
    await store.saveJudgement(db, row.id, {
      autoEvalScore: judgement?.score ?? null,
      autoEvalError: error,
      autoEvalReasoning: judgement?.reasoning ?? null,
      judgedAt: deps.clock.now(),
    });
    return error;
  }

  return {
    async recordOutputs(actor: Actor, experimentId: string, body: OutputsCreate) {
      const experiment = await deps.experiment(experimentId);
      const names = new Set(experiment.variants.map((v) => v.name));
      const unknown = body.outputs.findIndex((o) => !names.has(o.variant_name));
      if (unknown >= 0) throw new Unprocessable({ type: 'value_error', loc: ['body', 'outputs', unknown, 'variant_name'], msg: UNKNOWN_VARIANT });
      const now = deps.clock.now();
      await db.transaction(async (tx) => {
        await store.insertOutputs(
          tx,
          body.outputs.map((o) => ({
            id: randomUUID(),
            experimentId,
            variantName: o.variant_name,
            prompt: o.prompt ?? null,
            output: o.output,
            createdAt: now,
          })),
        );
        await deps.audit.record(tx, actor, {
          action: 'llm_outputs_record',
          entityType: 'experiment',
          entityId: experimentId,
          details: { outputs: body.outputs.length },
        });
      });
      return { experiment_id: experimentId, stored: body.outputs.length };
    },

    async judge(actor: Actor, experimentId: string, query: JudgeQuery): Promise<JudgeSummary> {
      const llm = deps.llm;
      if (!llm) throw new ServiceUnavailable(NO_LLM_CONFIGURED);
      await deps.experiment(experimentId);
      const rows = await store.outputsToJudge(db, experimentId, query.rejudge, query.limit);
      const errors: Array<JudgeError | null> = [];
      for (let i = 0; i < rows.length; i += JUDGE_CONCURRENCY) {
        errors.push(...(await Promise.all(rows.slice(i, i + JUDGE_CONCURRENCY).map((row) => judgeOne(llm, row, query.criteria)))));
      }
      const summary: JudgeSummary = {
        experiment_id: experimentId,
        judged: rows.length,
        scored: errors.filter((e) => e === null).length,
        call_failed: errors.filter((e) => e === 'call_failed').length,
        no_score: errors.filter((e) => e === 'no_score').length,
        remaining: await store.countUnjudged(db, experimentId),
      };
      await deps.audit.record(db, actor, {
        action: 'llm_experiment_judge',
        entityType: 'experiment',
        entityId: experimentId,
        details: { judged: summary.judged, scored: summary.scored, call_failed: summary.call_failed, no_score: summary.no_score },
      });
      return summary;
    },

    async results(experimentId: string): Promise<LlmResults> {
      const experiment = await deps.experiment(experimentId);
      const controlName = experiment.variants.find((v) => v.is_control)?.name;
      const stats = await store.variantStats(db, experimentId);
      const summaries = new Map<string, SampleSummary & { varies: boolean }>();
      const variants = stats.map((s) => {
        // The range decides "varies": a variance computed in floating point can be a hair above zero for equal scores.
        const varies = s.min !== null && s.max !== null && s.max > s.min;
        summaries.set(s.variantName, { n: s.scored, mean: s.mean ?? 0, variance: varies ? (s.variance ?? 0) : 0, varies });
        return {
          variant_name: s.variantName,
          is_control: s.variantName === controlName,
          n_outputs: s.outputs,
          n_pending: s.outputs - s.judged,
          n_auto_eval: s.scored,
          n_auto_eval_unscored: s.judged - s.scored,
          mean_auto_eval_score: s.mean,
          std_auto_eval_score: s.scored >= 2 ? Math.sqrt(varies ? (s.variance ?? 0) : 0) : null,
        };
      });
      const control = controlName === undefined ? undefined : summaries.get(controlName);
      const comparisons = control && controlName !== undefined
        ? variants
            .filter((v) => !v.is_control)
            .map((v) => {
              const treatment = summaries.get(v.variant_name)!;
              const testable = (control.varies || treatment.varies) && control.n >= 2 && treatment.n >= 2;
              const welch = testable ? welchTTest(control, treatment) : undefined;
              return {
                variant_name: v.variant_name,
                control_variant_name: controlName,
                difference: control.n > 0 && treatment.n > 0 ? treatment.mean - control.mean : null,
                p_value: welch && welch.reason === null ? welch.p_value : null,
                effect_size: testable ? cohensD(control, treatment) : null,
              };
            })
        : [];
      return {
        experiment_id: experimentId,
        variants,
        comparisons,
        total_auto_eval: variants.reduce((sum, v) => sum + v.n_auto_eval, 0),
        total_auto_eval_unscored: variants.reduce((sum, v) => sum + v.n_auto_eval_unscored, 0),
      };
    },
  };
}
