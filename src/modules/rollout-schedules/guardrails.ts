import type { RolloutGuardrailDecisionRow, RolloutStageRow, StoredGuardrails } from '../../db/schema/rollout-schedules.js';
import { Unprocessable } from '../../platform/errors.js';
import { guardrailMsprt } from '../../stats/index.js';
import type { GuardrailCounts, GuardrailWindows } from '../tracking/read-model.js';
import { DEFAULT_GUARDRAIL_CONFIDENCE, type DecisionView, type GuardrailMetricResult, type Guardrails } from './schemas.js';

export const DUPLICATE_GUARDRAIL = 'Guardrail event names must be distinct';

/**
 * The horizon of a stage's test: its exposure window grows from the stage's start for at most 7 days and then stops
 * (as much again before the stage is the baseline). A window that slid on instead would make every later look a new
 * test, and the mSPRT's false-alarm bound holds only for one growing sequence of looks.
 */
export const MAX_GUARDRAIL_WINDOW_MS = 7 * 24 * 60 * 60_000;

/** The body's guardrails with their defaults, as stored; null clears them; undefined leaves them. */
export function storedGuardrails(body: Guardrails | null | undefined, loc: (string | number)[]): StoredGuardrails | null | undefined {
  if (body === undefined || body === null) return body;
  const seen = new Set<string>();
  body.metrics.forEach((m, i) => {
    if (seen.has(m.event_name)) throw new Unprocessable({ type: 'value_error', loc: [...loc, 'metrics', i, 'event_name'], msg: DUPLICATE_GUARDRAIL });
    seen.add(m.event_name);
  });
  return {
    metrics: body.metrics.map((m) => ({ event_name: m.event_name, direction: m.direction })),
    confidence: body.confidence ?? DEFAULT_GUARDRAIL_CONFIDENCE,
    rollback_percentage: body.rollback_percentage ?? 0,
  };
}

export interface Evaluation {
  /** The stage whose exposure was tested: the last applied one. */
  stage: RolloutStageRow;
  windows: Omit<GuardrailWindows, 'flagId' | 'eventNames'>;
  confidence: number;
  metrics: GuardrailMetricResult[];
  degraded: boolean;
}

/**
 * What to test for a guarded schedule now, or null when there is nothing to test (no stage applied yet, or no time
 * has passed). The stage window runs from the later of the stage's application and the schedule's last rollback
 * (the exposure that caused a rollback never causes another) to now, or to 7 days after that start, where the test
 * stops: later looks see the same window and repeat its verdict. The baseline is a window of the same length right
 * before the stage was applied, so both samples cover the same length of time.
 */
export function windowsFor(stages: RolloutStageRow[], decisions: RolloutGuardrailDecisionRow[], now: Date): { stage: RolloutStageRow; windows: Evaluation['windows'] } | null {
  const stage = stages.filter((s) => s.appliedAt).at(-1);
  if (!stage?.appliedAt) return null;
  const lastRollback = decisions.filter((d) => d.decision === 'rollback').at(-1)?.createdAt.getTime() ?? 0;
  const from = Math.max(stage.appliedAt.getTime(), lastRollback);
  const to = Math.min(now.getTime(), from + MAX_GUARDRAIL_WINDOW_MS);
  const length = to - from;
  if (length <= 0) return null;
  const baselineTo = stage.appliedAt.getTime();
  return {
    stage,
    windows: { exposedFrom: new Date(from), exposedTo: new Date(to), baselineFrom: new Date(baselineTo - length), baselineTo: new Date(baselineTo) },
  };
}

/** The mSPRT of every guardrail on the read model's counts. */
export function testGuardrails(guardrails: StoredGuardrails, counts: GuardrailCounts): { metrics: GuardrailMetricResult[]; degraded: boolean } {
  const metrics = guardrails.metrics.map((m): GuardrailMetricResult => {
    const b = counts.baseline[m.event_name] ?? { users: 0, sum: 0, sum_squares: 0 };
    const t = counts.exposed[m.event_name] ?? { users: 0, sum: 0, sum_squares: 0 };
    const r = guardrailMsprt({
      baseline: { n: b.users, sum: b.sum, sum_squares: b.sum_squares },
      treatment: { n: t.users, sum: t.sum, sum_squares: t.sum_squares },
      direction: m.direction,
      confidence: guardrails.confidence,
    });
    return {
      event_name: m.event_name, direction: m.direction, degraded: r.degraded,
      baseline_users: b.users, baseline_mean: r.baseline_mean, exposed_users: t.users, exposed_mean: r.treatment_mean,
      difference: r.difference, relative_difference: r.relative_difference, z: r.z, log_likelihood_ratio: r.log_likelihood_ratio,
      log_threshold: r.log_threshold, always_valid_p: r.always_valid_p, reason: r.reason,
    };
  });
  return { metrics, degraded: metrics.some((m) => m.degraded) };
}

export function toDecisionView(d: RolloutGuardrailDecisionRow): DecisionView {
  return {
    id: d.id,
    decision: d.decision,
    stage_id: d.stageId,
    next_stage_id: d.nextStageId,
    automatic: d.automatic,
    confidence: d.confidence,
    rollout_percentage: d.rolloutPercentage,
    exposed_from: d.exposedFrom.toISOString(),
    exposed_to: d.exposedTo.toISOString(),
    baseline_from: d.baselineFrom.toISOString(),
    baseline_to: d.baselineTo.toISOString(),
    metrics: d.metrics as GuardrailMetricResult[],
    decided_at: d.createdAt.toISOString(),
  };
}
