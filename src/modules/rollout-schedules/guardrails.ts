import { definitionGuardrail } from '../../analysis/definition-guardrails.js';
import type { DefinitionSettings, VariantUserValues } from '../../analysis/types.js';
import type { RolloutGuardrailDecisionRow, RolloutStageRow, StoredGuardrails } from '../../db/schema/rollout-schedules.js';
import { Unprocessable, type ValidationIssue } from '../../platform/errors.js';
import { guardrailMsprt } from '../../stats/index.js';
import type { GuardrailCounts, GuardrailWindows } from '../tracking/read-model.js';
import { DEFAULT_GUARDRAIL_CONFIDENCE, type DecisionView, type GuardrailMetricResult, type Guardrails } from './schemas.js';

export const DUPLICATE_GUARDRAIL = 'Guardrail event names must be distinct';
export const DUPLICATE_DEFINITION_GUARDRAIL = 'Value error, guardrail metric definitions must be distinct';
export const GUARDRAIL_NEEDS_METRIC = 'Field required: event_name or metric_definition_id';
export const GUARDRAIL_BOTH_METRICS = 'Value error, a guardrail names event_name or metric_definition_id, not both';

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
  const issues: ValidationIssue[] = [];
  body.metrics.forEach((m, i) => {
    const at = (field: string) => [...loc, 'metrics', i, field];
    if (m.event_name === undefined && m.metric_definition_id === undefined) issues.push({ type: 'missing', loc: at('event_name'), msg: GUARDRAIL_NEEDS_METRIC });
    else if (m.event_name !== undefined && m.metric_definition_id !== undefined) issues.push({ type: 'value_error', loc: at('metric_definition_id'), msg: GUARDRAIL_BOTH_METRICS });
    else if (m.event_name !== undefined) {
      if (seen.has(`event:${m.event_name}`)) issues.push({ type: 'value_error', loc: at('event_name'), msg: DUPLICATE_GUARDRAIL });
      seen.add(`event:${m.event_name}`);
    } else {
      if (seen.has(`definition:${m.metric_definition_id}`)) issues.push({ type: 'value_error', loc: at('metric_definition_id'), msg: DUPLICATE_DEFINITION_GUARDRAIL });
      seen.add(`definition:${m.metric_definition_id}`);
    }
  });
  if (issues.length) throw new Unprocessable(issues);
  return {
    metrics: body.metrics.map((m) => (m.event_name !== undefined
      ? { event_name: m.event_name, direction: m.direction }
      : { metric_definition_id: m.metric_definition_id!, direction: m.direction })),
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

/** Per metric definition a guardrail names: its settings now and its per-user values in each window (absent: gone). */
export type DefinitionInputs = Map<string, { definition: DefinitionSettings; baseline: VariantUserValues; exposed: VariantUserValues }>;

type Tested = Omit<GuardrailMetricResult, 'event_name' | 'metric_definition_id' | 'direction' | 'degraded' | 'definition'>;
const NOT_TESTED: Omit<Tested, 'baseline_users' | 'exposed_users' | 'reason'> = {
  baseline_mean: null, exposed_mean: null, difference: null, relative_difference: null, z: null, log_likelihood_ratio: null,
  log_threshold: null, always_valid_p: 1,
};

/** A guardrail on a metric library definition, tested per the definition (src/analysis/definition-guardrails.ts). */
function testDefinition(id: string, direction: GuardrailMetricResult['direction'], confidence: number, inputs: DefinitionInputs): GuardrailMetricResult {
  const input = inputs.get(id);
  const head = { metric_definition_id: id, direction };
  if (!input) return { ...head, degraded: false, baseline_users: 0, exposed_users: 0, ...NOT_TESTED, reason: 'metric_definition_not_found' };
  const { definition: d, baseline, exposed } = input;
  const r = definitionGuardrail(d, { baseline, exposed }, direction, confidence);
  const users = { baseline_users: baseline.users, exposed_users: exposed.users };
  // Only mean and ratio definitions are accepted as guardrails, and their kind cannot change while a schedule is open.
  if (!r || (d.kind !== 'mean' && d.kind !== 'ratio')) return { ...head, degraded: false, ...users, ...NOT_TESTED, reason: 'kind_not_supported' };
  return {
    ...head, degraded: r.degraded, ...users,
    baseline_mean: r.baseline_mean, exposed_mean: r.treatment_mean, difference: r.difference, relative_difference: r.relative_difference,
    z: r.z, log_likelihood_ratio: r.log_likelihood_ratio, log_threshold: r.log_threshold, always_valid_p: r.always_valid_p, reason: r.reason,
    definition: {
      name: d.name ?? id, version: d.version, kind: d.kind,
      capping: d.capping.type === 'none' ? null : {
        type: d.capping.type, p: d.capping.type === 'percentile' ? d.capping.p : null, cap: r.cap, users_capped: r.users_capped,
      },
    },
  };
}

/** The mSPRT of every guardrail: event guardrails on the read model's counts, definition guardrails on their values. */
export function testGuardrails(
  guardrails: StoredGuardrails, counts: GuardrailCounts, definitions: DefinitionInputs = new Map(),
): { metrics: GuardrailMetricResult[]; degraded: boolean } {
  const metrics = guardrails.metrics.map((m): GuardrailMetricResult => {
    if (m.event_name === undefined) return testDefinition(m.metric_definition_id!, m.direction, guardrails.confidence, definitions);
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

/** What a decision's audit entry and notice say degraded: event names, and the metric definitions (when any is a guardrail). */
export function degradedOf(guardrails: StoredGuardrails, metrics: GuardrailMetricResult[]) {
  const degraded = metrics.filter((m) => m.degraded);
  return {
    degraded_metrics: degraded.flatMap((m) => (m.event_name === undefined ? [] : [m.event_name])),
    ...(guardrails.metrics.some((m) => m.metric_definition_id !== undefined)
      ? { degraded_metric_definitions: degraded.flatMap((m) => (m.definition ? [{ id: m.metric_definition_id!, name: m.definition.name }] : [])) }
      : {}),
  };
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
