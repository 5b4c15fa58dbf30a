import { Type, type Static } from 'typebox';
import { ROLLOUT_SCHEDULE_STATUSES } from '../../db/schema/rollout-schedules.js';
import { DateTime, Nullable, Pagination, StringEnum, Uuid } from '../../platform/schemas.js';

/** Enough for any staged rollout; bounds the work of one schedule. */
export const MAX_STAGES = 50;

const Percentage = Type.Integer({ minimum: 0, maximum: 100, description: 'Rollout percentage the stage sets on the flag' });
const ScheduledAt = Nullable(DateTime({ description: 'When the scheduler applies the stage; null (or left out) waits for a manual advance' }));
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Description = Nullable(Type.String({ maxLength: 2000 }));

/** Enough guardrails for any rollout; bounds the read-model work of one check. */
export const MAX_GUARDRAIL_METRICS = 10;
export const DEFAULT_GUARDRAIL_CONFIDENCE = 0.95;
export const GUARDRAIL_DIRECTIONS = ['lower_is_better', 'higher_is_better'] as const;
export const GUARDRAIL_DECISIONS = ['advance', 'rollback'] as const;

export const GuardrailMetric = Type.Object(
  {
    event_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A tracked event name (event_type), e.g. checkout_error: its count per user is tested' })),
    metric_definition_id: Type.Optional(Uuid({
      description: 'A metric library definition of kind mean (capped as defined) or ratio (delta method) to test instead of an event count; proportion and quantile definitions are refused (422)',
    })),
    direction: StringEnum(GUARDRAIL_DIRECTIONS, { description: 'lower_is_better: a higher value per user is a degradation; higher_is_better: a lower one is' }),
  },
  { additionalProperties: false, description: 'Exactly one of event_name and metric_definition_id' },
);

export const Guardrails = Type.Object(
  {
    metrics: Type.Array(GuardrailMetric, { minItems: 1, maxItems: MAX_GUARDRAIL_METRICS, description: 'Distinct event names and distinct metric definitions' }),
    confidence: Type.Optional(Type.Number({
      minimum: 0.5, maximum: 0.999, description: `Confidence of the mSPRT degradation test (default ${DEFAULT_GUARDRAIL_CONFIDENCE})`,
    })),
    rollback_percentage: Type.Optional(Type.Integer({
      minimum: 0, maximum: 100, description: 'Rollout percentage a degradation rolls the flag back to (default 0: nobody)',
    })),
  },
  { additionalProperties: false, description: 'Guarded rollout: a stage advances only while no guardrail degrades; a degradation rolls back' },
);
export type Guardrails = Static<typeof Guardrails>;

export const StageInput = Type.Object(
  { percentage: Percentage, scheduled_at: Type.Optional(ScheduledAt) },
  { additionalProperties: false, examples: [{ percentage: 75, scheduled_at: '2027-02-12T09:00:00Z' }] },
);
export type StageInput = Static<typeof StageInput>;

export const StageUpdate = Type.Object(
  { percentage: Type.Optional(Percentage), scheduled_at: Type.Optional(ScheduledAt) },
  { additionalProperties: false, examples: [
    { percentage: 30, scheduled_at: '2027-02-08T09:00:00Z' },
    { scheduled_at: null },
  ] },
);
export type StageUpdate = Static<typeof StageUpdate>;

export const ScheduleCreate = Type.Object(
  {
    flag_id: Uuid(),
    name: Name,
    description: Type.Optional(Description),
    stages: Type.Optional(Type.Array(StageInput, { maxItems: MAX_STAGES, description: 'In the order they run' })),
    guardrails: Type.Optional(Nullable(Guardrails)),
    environment: Type.Optional(Type.String({
      minLength: 1, maxLength: 64, pattern: '^[a-z0-9_-]{1,64}$',
      description: "The environment whose rollout the schedule moves (absent: the default environment; unknown: 422)",
    })),
  },
  { additionalProperties: false, examples: [
    {
      flag_id: 'c2d4e6f8-1a3b-4c5d-8e7f-9a0b1c2d3e4f',
      name: 'New checkout rollout',
      description: 'Ramp up over two weeks',
      stages: [
        { percentage: 10, scheduled_at: '2027-02-01T09:00:00Z' },
        { percentage: 25, scheduled_at: '2027-02-04T09:00:00Z' },
        { percentage: 50, scheduled_at: '2027-02-08T09:00:00Z' },
        { percentage: 100, scheduled_at: null },
      ],
    },
  ] },
);
export type ScheduleCreate = Static<typeof ScheduleCreate>;

export const ScheduleUpdate = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description), guardrails: Type.Optional(Nullable(Guardrails)) },
  { additionalProperties: false, examples: [
    { name: 'New checkout rollout (EU first)', description: 'Ramp up over three weeks' },
  ] },
);
export type ScheduleUpdate = Static<typeof ScheduleUpdate>;

export const StageView = Type.Object({
  id: Uuid(),
  position: Type.Integer({ description: '1 for the stage that runs first' }),
  percentage: Type.Integer(),
  scheduled_at: Nullable(DateTime()),
  status: StringEnum(['pending', 'applied'] as const),
  applied_at: Nullable(DateTime()),
});
export type StageView = Static<typeof StageView>;

export const GuardrailsView = Type.Object({
  metrics: Type.Array(GuardrailMetric),
  confidence: Type.Number(),
  rollback_percentage: Type.Integer(),
});
export type GuardrailsView = Static<typeof GuardrailsView>;

const MaybeNumber = Nullable(Type.Number());
export const GuardrailDefinitionResult = Type.Object({
  name: Type.String(),
  version: Type.Integer({ minimum: 1, description: 'The definition version this test used' }),
  kind: StringEnum(['mean', 'ratio'] as const),
  capping: Nullable(Type.Object({
    type: StringEnum(['absolute', 'percentile'] as const),
    p: MaybeNumber,
    cap: Nullable(Type.Number({ description: 'The cap applied to per-user values (ratio: to the numerator), pooled over both windows; null without values' })),
    users_capped: Type.Integer({ minimum: 0, description: 'Users of both windows whose value was above the cap' }),
  })),
}, { description: 'Present when the guardrail names a metric library definition (baseline_mean and exposed_mean are then its values: the mean per user, or the ratio of means)' });

export const GuardrailMetricResult = Type.Object({
  event_name: Type.Optional(Type.String({ description: 'An event guardrail: its event name' })),
  metric_definition_id: Type.Optional(Uuid({ description: 'A metric library guardrail: its definition' })),
  direction: StringEnum(GUARDRAIL_DIRECTIONS),
  degraded: Type.Boolean(),
  baseline_users: Type.Integer({ description: 'Users with a tracked event in the baseline window' }),
  baseline_mean: MaybeNumber,
  exposed_users: Type.Integer({ description: 'Users who got the flag on in the stage window (tracked events tagged with the flag)' }),
  exposed_mean: MaybeNumber,
  difference: MaybeNumber,
  relative_difference: MaybeNumber,
  z: MaybeNumber,
  log_likelihood_ratio: MaybeNumber,
  log_threshold: MaybeNumber,
  always_valid_p: Type.Number(),
  reason: Nullable(Type.String({
    description: 'Why no test could be made (insufficient_data, zero_variance, invalid_input; metric_definition_not_found when the definition is gone)',
  })),
  definition: Type.Optional(GuardrailDefinitionResult),
});
export type GuardrailMetricResult = Static<typeof GuardrailMetricResult>;

export const DecisionView = Type.Object({
  id: Uuid(),
  decision: StringEnum(GUARDRAIL_DECISIONS),
  stage_id: Nullable(Uuid({ description: 'The stage whose exposure was tested' })),
  next_stage_id: Nullable(Uuid({ description: 'The stage applied by an advance decision' })),
  automatic: Type.Boolean({ description: 'Taken by the scheduler (true) or on a manual advance (false)' }),
  confidence: Type.Number(),
  rollout_percentage: Type.Integer({ description: 'The flag rollout the decision set' }),
  exposed_from: DateTime(),
  exposed_to: DateTime(),
  baseline_from: DateTime(),
  baseline_to: DateTime(),
  metrics: Type.Array(GuardrailMetricResult),
  decided_at: DateTime(),
});
export type DecisionView = Static<typeof DecisionView>;

export const ScheduleView = Type.Object({
  id: Uuid(),
  flag_id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  status: StringEnum(ROLLOUT_SCHEDULE_STATUSES),
  owner_id: Nullable(Uuid({ description: 'null once the creator account is deleted' })),
  stages: Type.Array(StageView),
  created_at: DateTime(),
  updated_at: DateTime(),
  guardrails: Nullable(GuardrailsView),
  decisions: Type.Array(DecisionView, { description: 'Guardrail decisions, oldest first' }),
  environment: Type.Optional(Type.String({ description: 'The environment whose rollout the schedule moves; absent: the default environment' })),
});
export type ScheduleView = Static<typeof ScheduleView>;

export const ScheduleListQuery = Type.Object({
  ...Pagination({ limit: 100, max: 500 }).properties,
  flag_id: Type.Optional(Uuid()),
  status: Type.Optional(StringEnum(ROLLOUT_SCHEDULE_STATUSES)),
});
export type ScheduleListQuery = Static<typeof ScheduleListQuery>;

export const ScheduleList = Type.Object({
  items: Type.Array(ScheduleView),
  total: Type.Integer({ description: 'All matches, not the page size' }),
  skip: Type.Integer(),
  limit: Type.Integer(),
});

export const ScheduleParams = Type.Object({ schedule_id: Uuid() });
export const StageParams = Type.Object({ stage_id: Uuid() });
