import { Type, type Static } from 'typebox';
import { CORRECTION_METHODS } from '../experiments/domain.js';
import { Nullable, StringEnum } from '../../platform/schemas.js';

/** Spec, power calculator bounds: sizes and traffic at most 10^12 (422 less_than_equal), at most 100 variants. */
export const MAX_UNITS = 1e12;
export const MAX_VARIANTS = 100;

const Rate = Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, description: 'Conversion rate of the control, e.g. 0.05' });
const common = {
  confidence_level: Type.Number({ minimum: 0.8, maximum: 0.99, default: 0.95 }),
  power: Type.Number({ minimum: 0.5, maximum: 0.99, default: 0.8 }),
  n_variants: Type.Integer({ minimum: 2, maximum: MAX_VARIANTS, default: 2, description: 'Variants including the control' }),
  correction_method: StringEnum(CORRECTION_METHODS, {
    default: 'none', description: 'bonferroni and benjamini_hochberg plan each comparison at alpha / (variants - 1)',
  }),
};
const Mde = Type.Number({ exclusiveMinimum: 0, maximum: MAX_UNITS, description: 'Minimum detectable effect (relative: 0.10 plans 5% -> 5.5%)' });
const DailyTraffic = Type.Number({ exclusiveMinimum: 0, maximum: MAX_UNITS, description: 'Users entering the experiment per day' });

export const SampleSizeBody = Type.Object(
  {
    baseline_conversion_rate: Rate,
    mde: Mde,
    mde_type: StringEnum(['relative', 'absolute'], { default: 'relative' }),
    ...common,
  },
  { additionalProperties: false, examples: [
    {
      baseline_conversion_rate: 0.05,
      mde: 0.1,
      mde_type: 'relative',
      confidence_level: 0.95,
      power: 0.8,
      n_variants: 2,
      correction_method: 'none',
    },
  ] },
);
export type SampleSizeBody = Static<typeof SampleSizeBody>;

export const MdeBody = Type.Object(
  {
    baseline_conversion_rate: Rate,
    sample_size_per_variant: Type.Integer({ minimum: 1, maximum: MAX_UNITS }),
    direction: StringEnum(['increase', 'decrease'], { default: 'increase' }),
    ...common,
  },
  { additionalProperties: false, examples: [
    {
      baseline_conversion_rate: 0.05,
      sample_size_per_variant: 30000,
      direction: 'increase',
      confidence_level: 0.95,
      power: 0.8,
      n_variants: 2,
      correction_method: 'none',
    },
  ] },
);
export type MdeBody = Static<typeof MdeBody>;

export const RuntimeBody = Type.Object(
  {
    required_sample_size: Type.Integer({ minimum: 0, maximum: MAX_UNITS, description: 'Users needed per variant' }),
    daily_traffic: DailyTraffic,
    n_variants: common.n_variants,
    traffic_share: Type.Number({ exclusiveMinimum: 0, maximum: 1, default: 1, description: 'Share of the daily traffic in the experiment' }),
  },
  { additionalProperties: false, examples: [
    { required_sample_size: 31234, daily_traffic: 5000, n_variants: 2, traffic_share: 0.5 },
  ] },
);
export type RuntimeBody = Static<typeof RuntimeBody>;

export const PlanBody = Type.Object(
  {
    baseline_conversion_rate: Rate,
    mde: Mde,
    mde_type: StringEnum(['relative', 'absolute'], { default: 'relative' }),
    ...common,
    daily_traffic: Type.Optional(DailyTraffic),
  },
  { additionalProperties: false, examples: [
    {
      baseline_conversion_rate: 0.05,
      mde: 0.1,
      mde_type: 'relative',
      daily_traffic: 5000,
      confidence_level: 0.95,
      power: 0.8,
      n_variants: 3,
      correction_method: 'bonferroni',
    },
  ] },
);
export type PlanBody = Static<typeof PlanBody>;

const planFields = {
  baseline_conversion_rate: Type.Number(),
  treatment_rate: Type.Number(),
  mde_absolute: Type.Number(),
  mde_relative: Type.Number(),
  confidence_level: Type.Number(),
  power: Type.Number(),
  n_variants: Type.Integer(),
  comparisons: Type.Integer(),
  correction_method: StringEnum(CORRECTION_METHODS),
  alpha_per_comparison: Type.Number(),
};

export const SampleSizeView = Type.Object({
  ...planFields,
  required_sample_size_per_variant: Type.Integer(),
  total_sample_size: Type.Integer(),
});
export type SampleSizeView = Static<typeof SampleSizeView>;

export const MdeView = Type.Object({ ...planFields, sample_size_per_variant: Type.Integer(), direction: StringEnum(['increase', 'decrease']) });
export type MdeView = Static<typeof MdeView>;

export const RuntimeView = Type.Object({
  required_sample_size: Type.Integer(),
  daily_traffic: Type.Number(),
  traffic_share: Type.Number(),
  n_variants: Type.Integer(),
  users_per_variant_per_day: Type.Number(),
  total_sample_size: Type.Integer(),
  days: Type.Integer(),
});
export type RuntimeView = Static<typeof RuntimeView>;

export const PlanView = Type.Object({
  ...planFields,
  required_sample_size_per_variant: Type.Integer(),
  total_sample_size: Type.Integer(),
  daily_traffic: Nullable(Type.Number()),
  estimated_days: Nullable(Type.Integer()),
  advice: Type.Array(Type.String()),
  generated_by: StringEnum(['template'], { description: 'The advice is always built in' }),
});
export type PlanView = Static<typeof PlanView>;
