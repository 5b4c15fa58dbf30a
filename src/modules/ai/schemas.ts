import { Type, type Static } from 'typebox';
import { Nullable, StringEnum, Uuid } from '../../platform/schemas.js';
import { CORRECTIONS } from './planning.js';

const Rate = (description: string) => Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, description });
const GeneratedBy = StringEnum(['template', 'llm'], { description: 'template: built-in answer; llm: the configured language model' });

const PlanFields = {
  baseline_conversion_rate: Rate('Current conversion rate of the control, e.g. 0.05'),
  mde: Rate('Relative minimum detectable effect: 0.10 plans for 5% -> 5.5%'),
  confidence_level: Type.Number({ minimum: 0.8, maximum: 0.99 }),
  power: Type.Number({ minimum: 0.5, maximum: 0.99 }),
  n_variants: Type.Integer({ minimum: 2, maximum: 100, description: 'Variants including the control' }),
  daily_traffic: Type.Integer({ minimum: 1, maximum: 1e12, description: 'Users entering the experiment per day' }),
};

export const SampleSizeQuery = Type.Object({
  baseline_conversion_rate: PlanFields.baseline_conversion_rate,
  mde: Type.Number({ ...PlanFields.mde, default: 0.05 }),
  confidence_level: Type.Number({ ...PlanFields.confidence_level, default: 0.95 }),
  power: Type.Number({ ...PlanFields.power, default: 0.8 }),
  n_variants: Type.Integer({ ...PlanFields.n_variants, default: 2 }),
  correction_method: StringEnum(CORRECTIONS, { default: 'benjamini_hochberg', description: 'Corrections plan each comparison at alpha / (variants - 1)' }),
  daily_traffic: Type.Optional(PlanFields.daily_traffic),
});
export type SampleSizeQuery = Static<typeof SampleSizeQuery>;

export const SampleSizePlanView = Type.Object({
  baseline_conversion_rate: Type.Number(),
  mde: Type.Number(),
  mde_absolute: Type.Number(),
  target_conversion_rate: Type.Number(),
  confidence_level: Type.Number(),
  power: Type.Number(),
  n_variants: Type.Integer(),
  comparisons: Type.Integer(),
  alpha_per_comparison: Type.Number(),
  correction_method: StringEnum(CORRECTIONS),
  required_sample_size_per_variant: Type.Integer(),
  total_sample_size: Type.Integer(),
  daily_traffic: Nullable(Type.Integer()),
  estimated_days: Nullable(Type.Integer()),
  explanation: Type.String(),
  generated_by: StringEnum(['template']),
});

const TemplateVariantView = Type.Object({ name: Type.String(), is_control: Type.Boolean(), description: Type.String() });
const TemplateMetricView = Type.Object({
  name: Type.String(),
  event_name: Type.String(),
  metric_type: StringEnum(['conversion']),
  is_primary: Type.Boolean(),
});
const ExperimentType = StringEnum(['a_b', 'mv', 'split_url', 'bandit']);

export const TemplateView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  category: Type.String(),
  description: Type.String(),
  experiment_type: ExperimentType,
  hypothesis: Type.String(),
  variants: Type.Array(TemplateVariantView),
  metrics: Type.Array(TemplateMetricView),
  default_baseline_conversion_rate: Type.Number(),
  default_mde: Type.Number(),
  tags: Type.Array(Type.String()),
});
const TemplateId = Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z0-9-]+$' });
export const TemplateParams = Type.Object({ template_id: TemplateId });

export const DesignRequest = Type.Object(
  {
    goal: Type.String({ minLength: 3, maxLength: 2000, description: 'What the experiment should improve, in plain words' }),
    template_id: Type.Optional(TemplateId),
    baseline_conversion_rate: Type.Optional(PlanFields.baseline_conversion_rate),
    mde: Type.Optional(PlanFields.mde),
    confidence_level: Type.Optional(PlanFields.confidence_level),
    power: Type.Optional(PlanFields.power),
    n_variants: Type.Optional(Type.Integer({ minimum: 2, maximum: 10, description: "Default: the template's" })),
    daily_traffic: Type.Optional(PlanFields.daily_traffic),
  },
  { additionalProperties: false, examples: [
    {
      goal: 'Increase checkout conversion with a one-page checkout',
      baseline_conversion_rate: 0.05,
      mde: 0.1,
      daily_traffic: 20000,
      n_variants: 2,
      confidence_level: 0.95,
      power: 0.8,
    },
  ] },
);
export type DesignRequest = Static<typeof DesignRequest>;

export const DesignView = Type.Object({
  generated_by: GeneratedBy,
  template_id: Type.String(),
  experiment: Type.Object({
    name: Type.String(),
    key: Type.String(),
    description: Type.String(),
    hypothesis: Type.String(),
    experiment_type: ExperimentType,
    variants: Type.Array(Type.Object({ ...TemplateVariantView.properties, traffic_allocation: Type.Number() })),
    metrics: Type.Array(Type.Object({ ...TemplateMetricView.properties, expected_effect: Nullable(Type.Number()) })),
    confidence_level: Type.Number(),
    correction_method: StringEnum(CORRECTIONS),
  }),
  sample_size: SampleSizePlanView,
  rationale: Type.Array(Type.String()),
});
export type DesignView = Static<typeof DesignView>;

export const InterpretParams = Type.Object({ experiment_id: Uuid() });

export const InterpretationView = Type.Object({
  experiment_id: Uuid(),
  experiment_name: Type.String(),
  status: Type.String(),
  generated_by: GeneratedBy,
  recommendation: Nullable(StringEnum(['SHIP_VARIANT', 'KEEP_CONTROL', 'CONTINUE_TESTING', 'INCONCLUSIVE'])),
  summary: Type.String(),
  key_findings: Type.Array(Type.String()),
  next_steps: Type.Array(Type.String()),
  caveats: Type.Array(Type.String()),
});
export type InterpretationView = Static<typeof InterpretationView>;
