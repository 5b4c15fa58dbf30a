/** Platform events users can be alerted about, and the text each one sends. */
export const NOTIFICATION_KINDS = [
  'experiment_started', 'experiment_completed', 'srm_detected', 'flag_rolled_back',
  'rollout_guardrail_decision',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export interface NotificationPayloads {
  experiment_started: { experiment_id: string; experiment_name: string };
  experiment_completed: { experiment_id: string; experiment_name: string; recommendation?: string | null };
  srm_detected: { experiment_id: string; experiment_name: string; p_value: number; auto_paused?: boolean };
  flag_rolled_back: { flag_id: string; flag_key: string; percentage: number; reason?: string | null; environment?: string | null };
  rollout_guardrail_decision: {
    schedule_id: string; schedule_name: string; flag_id: string; flag_key: string;
    decision: 'advance' | 'rollback'; rollout_percentage: number; degraded_metrics: string[]; environment?: string | null;
    /** Guardrails on metric library definitions that degraded (present when the schedule has any). */
    degraded_metric_definitions?: Array<{ id: string; name: string }>;
  };
}

export interface RenderedMessage {
  subject: string;
  text: string;
}

/** A flag change in a named environment says so (none named: the default environment, as before environments). */
const inEnvironment = (environment: string | null | undefined) => (environment ? ` in the environment "${environment}"` : '');

type Renderers = { [K in NotificationKind]: (payload: NotificationPayloads[K]) => RenderedMessage };

const RENDERERS: Renderers = {
  experiment_started: (p) => ({
    subject: `Experiment started: ${p.experiment_name}`,
    text: `The experiment "${p.experiment_name}" (${p.experiment_id}) has started.`,
  }),
  experiment_completed: (p) => ({
    subject: `Experiment completed: ${p.experiment_name}`,
    text:
      `The experiment "${p.experiment_name}" (${p.experiment_id}) has completed.` +
      (p.recommendation ? ` Recommendation: ${p.recommendation}.` : ''),
  }),
  srm_detected: (p) => ({
    subject: `Sample ratio mismatch: ${p.experiment_name}`,
    text:
      `The experiment "${p.experiment_name}" (${p.experiment_id}) shows a sample ratio mismatch ` +
      `(p = ${p.p_value.toPrecision(3)}). Its results are reported as INCONCLUSIVE until the cause is found.` +
      (p.auto_paused ? ' The experiment was paused automatically (SRM auto-pause is on); resume it once the cause is fixed.' : ''),
  }),
  flag_rolled_back: (p) => ({
    subject: `Feature flag rolled back: ${p.flag_key}`,
    text:
      `The feature flag "${p.flag_key}" (${p.flag_id}) was rolled back to ${p.percentage}%${inEnvironment(p.environment)}.` +
      (p.reason ? ` Reason: ${p.reason}` : ''),
  }),
  rollout_guardrail_decision: (p) =>
    p.decision === 'rollback'
      ? {
        subject: `Guarded rollout rolled back: ${p.schedule_name}`,
        text:
          `The guardrails of the rollout schedule "${p.schedule_name}" (${p.schedule_id}) degraded (${[...p.degraded_metrics, ...(p.degraded_metric_definitions ?? []).map((d) => d.name)].join(', ')}): ` +
          `the feature flag "${p.flag_key}" (${p.flag_id}) was rolled back to ${p.rollout_percentage}%${inEnvironment(p.environment)} and the schedule paused.`,
      }
      : {
        subject: `Guarded rollout advanced: ${p.schedule_name}`,
        text:
          `No guardrail of the rollout schedule "${p.schedule_name}" (${p.schedule_id}) degraded: ` +
          `the feature flag "${p.flag_key}" (${p.flag_id}) advanced to ${p.rollout_percentage}%${inEnvironment(p.environment)}.`,
      },
};

export function render<K extends NotificationKind>(kind: K, payload: NotificationPayloads[K]): RenderedMessage {
  return (RENDERERS[kind] as (p: NotificationPayloads[K]) => RenderedMessage)(payload);
}

export const TEST_MESSAGE: RenderedMessage = {
  subject: 'Uplift test notification',
  text: 'This is a test notification from Uplift: this channel is set up correctly.',
};
