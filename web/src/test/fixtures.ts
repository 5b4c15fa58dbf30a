import type { Experiment } from '../features/experiments/hooks';
import type { Results, SampleSize } from '../features/results/hooks';

export const EXPERIMENT_ID = '11111111-1111-4111-8111-111111111111';
const CONTROL = '22222222-2222-4222-8222-222222222222';
const TREATMENT = '33333333-3333-4333-8333-333333333333';
const METRIC = '44444444-4444-4444-8444-444444444444';

export function experiment(patch: Partial<Experiment> = {}): Experiment {
  return {
    id: EXPERIMENT_ID,
    key: 'checkout-colour',
    name: 'Checkout colour',
    description: null,
    hypothesis: null,
    experiment_type: 'a_b',
    status: 'draft',
    owner_id: '00000000-0000-4000-8000-000000000001',
    owner_name: 'Ada Lovelace',
    start_date: null,
    end_date: null,
    created_at: '2026-11-01T10:00:00.000Z',
    updated_at: '2026-11-01T10:00:00.000Z',
    confidence_level: 0.95,
    correction_method: 'benjamini_hochberg',
    sequential_testing_enabled: false,
    sequential_testing_config: null,
    bayesian_enabled: false,
    bayesian_config: null,
    bayesian_decision: null,
    variance_reduction_config: null,
    split_url_config: null,
    targeting_rules: null,
    metadata: null,
    variants: [
      { id: CONTROL, name: 'control', description: null, is_control: true, traffic_allocation: 50, configuration: null },
      { id: TREATMENT, name: 'treatment', description: null, is_control: false, traffic_allocation: 50, configuration: null },
    ],
    metrics: [{ id: METRIC, name: 'Purchase', event_name: 'purchase', metric_type: 'conversion', is_primary: true, expected_effect: 0.1, description: null, metric_definition_id: null }],
    ...patch,
  };
}

type VariantRow = Results['metrics'][number]['variants'][number];
function variantRow(id: string, name: string, isControl: boolean, users: number, conversions: number, lift: number | null, significant: boolean): VariantRow {
  return {
    variant_id: id,
    variant_name: name,
    is_control: isControl,
    sample_size: users,
    conversions,
    mean: users ? conversions / users : null,
    relative_lift: lift,
    confidence_interval: lift === null ? null : { lower: lift - 0.2, upper: lift + 0.2 },
    p_value: isControl ? null : significant ? 0.001 : 0.5,
    adjusted_p_value: isControl ? null : significant ? 0.001 : 0.5,
    is_significant: significant,
  } as unknown as VariantRow;
}

/** A results payload: `users` per variant, the treatment converting at `treatmentRate` against 10 % for control. */
export function results(opts: { recommendation: Results['summary']['recommendation']; users?: number; treatmentRate?: number; reason?: string }): Results {
  const users = opts.users ?? 0;
  const control = Math.round(users * 0.1);
  const treatment = Math.round(users * (opts.treatmentRate ?? 0.1));
  const lift = users && control ? treatment / users / (control / users) - 1 : null;
  const significant = opts.recommendation === 'SHIP_VARIANT';
  return {
    experiment_id: EXPERIMENT_ID,
    computed_at: '2026-11-02T10:00:00.000Z',
    correction_method: 'benjamini_hochberg',
    confidence_level: 0.95,
    summary: {
      recommendation: opts.recommendation,
      recommendation_reason: opts.reason ?? 'No significant improvement on Purchase yet; keep collecting data.',
      has_winner: significant,
      winning_variant_id: significant ? TREATMENT : null,
    },
    srm: null,
    sequential_testing: null,
    bayesian_results: null,
    metrics: [
      {
        metric_id: METRIC,
        metric_name: 'Purchase',
        metric_type: 'conversion',
        is_primary: true,
        test: 'fisher_exact',
        variants: [variantRow(CONTROL, 'control', true, users, control, null, false), variantRow(TREATMENT, 'treatment', false, users, treatment, lift, significant)],
      },
    ],
  } as unknown as Results;
}

export function sampleSize(current: number, required: number | null): SampleSize {
  return {
    current_sample_size_per_variant: current,
    required_sample_size_per_variant: required,
    is_adequate: required !== null && current >= required,
    mde: 0.1,
    power_target: 0.8,
    guide_only_reasons: [],
    unavailable_reason: required === null ? 'no_expected_effect' : null,
  } as unknown as SampleSize;
}

type Flag = import('../features/feature-flags/hooks').Flag;
export const FLAG_ID = '55555555-5555-4555-8555-555555555555';
export function flag(patch: Partial<Flag> = {}): Flag {
  return {
    id: FLAG_ID,
    key: 'new-checkout',
    name: 'New checkout',
    description: 'One-page checkout',
    status: 'inactive',
    is_active: false,
    rollout_percentage: 100,
    targeting_rules: null,
    default_value: false,
    tags: [],
    created_at: '2026-11-01T10:00:00.000Z',
    updated_at: '2026-11-01T10:00:00.000Z',
    ...patch,
  } as Flag;
}

type MetricDefinition = import('../features/metric-definitions/hooks').MetricDefinition;
export const DEFINITION_ID = '66666666-6666-4666-8666-666666666666';
export function metricDefinition(patch: Partial<MetricDefinition> = {}): MetricDefinition {
  return {
    id: DEFINITION_ID,
    name: 'Revenue per page view',
    description: null,
    kind: 'ratio',
    event_name: null,
    aggregate: null,
    numerator: { event_name: 'revenue', aggregate: 'sum' },
    denominator: { event_name: 'page_view', aggregate: 'count' },
    quantile: null,
    capping: { type: 'none' },
    higher_is_better: true,
    tags: ['revenue'],
    owner: 'Growth team',
    created_by: null,
    version: 1,
    created_at: '2026-11-01T10:00:00.000Z',
    updated_at: '2026-11-01T10:00:00.000Z',
    ...patch,
  };
}
