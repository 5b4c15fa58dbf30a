import { Type, type Static } from 'typebox';
import { BAYESIAN_DECISIONS, CORRECTION_METHODS, EXPERIMENT_STATUSES, EXPERIMENT_TYPES, METRIC_TYPES } from './domain.js';
import { DateTime, JsonObject, Nullable, Pagination, StringEnum, Uuid } from '../../platform/schemas.js';

const Name = Type.String({ minLength: 1, maxLength: 255 });
const LongText = Type.String({ maxLength: 10_000 });
export const KEY_MAX_LENGTH = 100;
export const ExperimentKey = Type.String({
  minLength: 1,
  maxLength: KEY_MAX_LENGTH,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$',
  description: 'Public key used by tracking and SDKs: letters, digits, `_ . : -`; unique; fixed once started',
});
const ConfidenceLevel = Type.Number({ minimum: 0.8, maximum: 0.99 });

export const VariantInput = Type.Object(
  {
    name: Name,
    description: Type.Optional(Nullable(LongText)),
    is_control: Type.Optional(Type.Boolean({ default: false })),
    traffic_allocation: Type.Number({ minimum: 0, maximum: 100, description: 'Percentage of the experiment traffic' }),
    configuration: Type.Optional(Nullable(JsonObject())),
  },
  { additionalProperties: false },
);
export type VariantInput = Static<typeof VariantInput>;

export const MetricInput = Type.Object(
  {
    name: Name,
    description: Type.Optional(Nullable(LongText)),
    event_name: Type.String({ minLength: 1, maxLength: 255 }),
    metric_type: Type.Optional(StringEnum(METRIC_TYPES, { default: 'conversion' })),
    is_primary: Type.Optional(Type.Boolean({ default: false })),
    expected_effect: Type.Optional(
      Nullable(Type.Number({ description: 'Relative minimum detectable effect of the primary metric (0.10 means 5% to 5.5%)' })),
    ),
    metric_definition_id: Type.Optional(
      Nullable(Uuid({ description: 'A metric library definition (GET /api/v1/metric-definitions) this metric uses; unknown is 422' })),
    ),
  },
  { additionalProperties: false },
);
export type MetricInput = Static<typeof MetricInput>;

export const SequentialTestingConfigInput = Type.Object(
  { alpha: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 0.2, default: 0.05 })) },
  { additionalProperties: false },
);
export const BayesianConfigInput = Type.Object(
  {
    prior_family: Type.Optional(StringEnum(['beta'], { default: 'beta' })),
    alpha: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, default: 1 })),
    beta: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, default: 1 })),
    loss_threshold: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, default: 0.01 })),
    rope: Type.Optional(Type.Number({ minimum: 0, exclusiveMaximum: 1, default: 0.01 })),
    credible_level: Type.Optional(Type.Number({ minimum: 0.8, maximum: 0.99, default: 0.95 })),
  },
  { additionalProperties: false },
);
export const VarianceReductionConfigInput = Type.Object(
  { covariate_metric_id: Type.Optional(Nullable(Uuid())) },
  { additionalProperties: false },
);

/** Fields both create and update accept; create makes the core ones required. */
const settable = {
  description: Type.Optional(Nullable(LongText)),
  hypothesis: Type.Optional(Nullable(LongText)),
  targeting_rules: Type.Optional(Nullable(JsonObject({ description: 'Targeting rules (logical_operator, groups)' }))),
  correction_method: Type.Optional(StringEnum(CORRECTION_METHODS)),
  confidence_level: Type.Optional(ConfidenceLevel),
  sequential_testing_enabled: Type.Optional(Type.Boolean()),
  sequential_testing_config: Type.Optional(Nullable(SequentialTestingConfigInput)),
  variance_reduction_config: Type.Optional(Nullable(VarianceReductionConfigInput)),
  bayesian_enabled: Type.Optional(Type.Boolean()),
  bayesian_config: Type.Optional(Nullable(BayesianConfigInput)),
  split_url_config: Type.Optional(Nullable(JsonObject({ description: 'Split URL configuration (full profile)' }))),
};
const Variants = Type.Array(VariantInput, { minItems: 1, maxItems: 50 });
const Metrics = Type.Array(MetricInput, { minItems: 1, maxItems: 50 });

export const ExperimentCreate = Type.Object(
  {
    name: Name,
    key: ExperimentKey,
    status: Type.Optional(StringEnum(['draft'], { description: 'Always draft on create' })),
    variants: Variants,
    metrics: Metrics,
    experiment_type: Type.Optional(StringEnum(EXPERIMENT_TYPES, { default: 'a_b' })),
    ...settable,
  },
  { additionalProperties: false, examples: [
    {
      name: 'Checkout button colour',
      key: 'checkout-button-colour',
      description: 'Green instead of blue for the pay button',
      hypothesis: 'A green pay button raises checkout conversion by 10%',
      experiment_type: 'a_b',
      variants: [
        { name: 'control', is_control: true, traffic_allocation: 50, configuration: { button_colour: 'blue' } },
        { name: 'green', is_control: false, traffic_allocation: 50, configuration: { button_colour: 'green' } },
      ],
      metrics: [
        {
          name: 'Checkout conversion',
          event_name: 'purchase',
          metric_type: 'conversion',
          is_primary: true,
          expected_effect: 0.1,
        },
      ],
      targeting_rules: {
        logical_operator: 'AND',
        groups: [
          { logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'in', value: ['US', 'CA'] }] },
        ],
      },
      correction_method: 'benjamini_hochberg',
      confidence_level: 0.95,
    },
  ] },
);
export type ExperimentCreate = Static<typeof ExperimentCreate>;

export const ExperimentUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    key: Type.Optional(ExperimentKey),
    status: Type.Optional(StringEnum(EXPERIMENT_STATUSES, { description: 'Only the current status; use the lifecycle routes to change it' })),
    variants: Type.Optional(Variants),
    metrics: Type.Optional(Metrics),
    start_date: Type.Optional(Nullable(DateTime())),
    end_date: Type.Optional(Nullable(DateTime())),
    // No default here: a PUT that leaves the type out keeps it.
    experiment_type: Type.Optional(StringEnum(EXPERIMENT_TYPES)),
    ...settable,
  },
  { additionalProperties: false, examples: [
    {
      description: 'Green pay button, also on mobile',
      metrics: [
        {
          name: 'Checkout conversion',
          event_name: 'purchase',
          metric_type: 'conversion',
          is_primary: true,
          expected_effect: 0.08,
        },
        { name: 'Revenue', event_name: 'purchase', metric_type: 'revenue' },
      ],
    },
  ] },
);
export type ExperimentUpdate = Static<typeof ExperimentUpdate>;

export const ExperimentSchedule = Type.Object(
  { start_date: Type.Optional(Nullable(DateTime())), end_date: Type.Optional(Nullable(DateTime())) },
  { additionalProperties: false, examples: [{ start_date: '2027-03-01T09:00:00Z', end_date: '2027-03-29T09:00:00Z' }] },
);
export type ExperimentSchedule = Static<typeof ExperimentSchedule>;

export const ExperimentMetadata = JsonObject({
  maxProperties: 100,
  description: 'Free-form annotations; each key sent replaces the stored one, null removes it',
  examples: [{ ticket: 'SHOP-123', team: 'checkout', launch_note: null }],
});

export const VariantView = Type.Object({
  id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  is_control: Type.Boolean(),
  traffic_allocation: Type.Number(),
  configuration: Nullable(JsonObject()),
});
export const MetricView = Type.Object({
  id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  event_name: Type.String(),
  metric_type: Type.String(),
  is_primary: Type.Boolean(),
  expected_effect: Nullable(Type.Number()),
  metric_definition_id: Nullable(Uuid()),
});

export const ExperimentView = Type.Object({
  id: Uuid(),
  key: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  hypothesis: Nullable(Type.String()),
  experiment_type: StringEnum(EXPERIMENT_TYPES),
  status: StringEnum(EXPERIMENT_STATUSES),
  variants: Type.Array(VariantView),
  metrics: Type.Array(MetricView),
  targeting_rules: Nullable(JsonObject()),
  correction_method: StringEnum(CORRECTION_METHODS),
  confidence_level: Type.Number(),
  sequential_testing_enabled: Type.Boolean(),
  sequential_testing_config: Nullable(JsonObject()),
  variance_reduction_config: Nullable(JsonObject()),
  bayesian_enabled: Type.Boolean(),
  bayesian_config: Nullable(JsonObject()),
  bayesian_decision: Nullable(StringEnum(BAYESIAN_DECISIONS)),
  split_url_config: Nullable(JsonObject()),
  metadata: Nullable(JsonObject()),
  start_date: Nullable(DateTime()),
  end_date: Nullable(DateTime()),
  owner_id: Nullable(Uuid()),
  owner_name: Type.Optional(Nullable(Type.String({ description: 'Only on GET detail; never an email' }))),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export type ExperimentView = Static<typeof ExperimentView>;

export const SORT_FIELDS = ['created_at', 'updated_at', 'name', 'key', 'status', 'start_date', 'end_date'] as const;
export type SortField = (typeof SORT_FIELDS)[number];

export const ExperimentListQuery = Type.Object({
  status_filter: Type.Optional(StringEnum(EXPERIMENT_STATUSES)),
  ...Pagination({ limit: 100, max: 500 }).properties,
  search: Type.Optional(Type.String({ maxLength: 255, description: 'Part of the name, key or description, any case' })),
  sort_by: StringEnum(SORT_FIELDS, { default: 'created_at' }),
  sort_order: StringEnum(['asc', 'desc'], { default: 'desc' }),
});
export type ExperimentListQuery = Static<typeof ExperimentListQuery>;

export const ExperimentParams = Type.Object({ experiment_id: Uuid() });
