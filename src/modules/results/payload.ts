/**
 * The results payload (spec, "Results payload") from an experiment and its snapshot: pure, so every number can be
 * checked against src/stats directly.
 */
import type { CorrectionMethod } from '../../db/schema/experiments.js';
import type { ExperimentView } from '../experiments/schemas.js';
import { bayesianBlock, type BayesianBlock } from './bayesian.js';
import { alphaFor, metricKind, TEST_OF, variantResults, type VariantResult } from './compare.js';
import { judge, srmBlock, type SrmBlock, type Summary } from './judgement.js';
import { sampleSizePlan } from './sample-size.js';
import type { SegmentedResults } from './segments.js';
import { sequentialBlock, type SequentialBlock } from './sequential.js';
import { armTotals, assignedUsers, metricHeader, primaryMetric, treatmentsOf, type Snapshot } from './snapshot.js';

export interface ResultsOptions {
  correction_method: CorrectionMethod;
  confidence_level: number;
}

export interface MetricResult {
  metric_id: string;
  metric_name: string;
  event_name: string;
  metric_type: string;
  is_primary: boolean;
  test: 'fisher_exact' | 'welch_t';
  variants: VariantResult[];
}

export interface ResultsPayload {
  experiment_id: string;
  experiment_name: string;
  status: ExperimentView['status'];
  start_date: string | null;
  end_date: string | null;
  computed_at: string;
  correction_method: CorrectionMethod;
  confidence_level: number;
  metrics: MetricResult[];
  summary: Summary;
  sample_size_adequate: boolean;
  srm: SrmBlock | null;
  sequential_testing: SequentialBlock | null;
  bayesian_results: BayesianBlock | null;
  breakdown: SegmentedResults | null;
  analysis_status: 'ga';
}

/** Spec, "How results are judged" 4: sequential testing embedded at the stored alpha, control vs first treatment. */
export function storedSequentialAlpha(e: ExperimentView): number {
  const alpha = (e.sequential_testing_config as { alpha?: number } | null)?.alpha;
  return typeof alpha === 'number' ? alpha : 0.05;
}

export function buildResults(
  e: ExperimentView, snapshot: Snapshot, options: ResultsOptions, breakdown: SegmentedResults | null, computedAt: Date,
): ResultsPayload {
  const metrics = e.metrics.map((m): MetricResult => {
    const kind = metricKind(m.metric_type);
    return {
      ...metricHeader(m),
      event_name: m.event_name,
      test: TEST_OF[kind],
      variants: variantResults(kind, e.variants, armTotals(snapshot, m.event_name), options.correction_method, options.confidence_level),
    };
  });
  const primary = primaryMetric(e);
  const primaryTotals = armTotals(snapshot, primary?.event_name ?? '');
  const plan = sampleSizePlan(e, primaryTotals, options);
  const srm = srmBlock(e, assignedUsers(snapshot));
  const summary = judge({
    metric: primary,
    variants: metrics.find((m) => m.metric_id === primary?.id)?.variants ?? [],
    alpha: alphaFor(options.confidence_level),
    sampleSizeAdequate: plan.is_adequate,
    required: plan.required_sample_size_per_variant,
    srm,
  });
  const firstTreatment = treatmentsOf(e).slice(0, 1);
  return {
    experiment_id: e.id,
    experiment_name: e.name,
    status: e.status,
    start_date: e.start_date,
    end_date: e.end_date,
    computed_at: computedAt.toISOString(),
    correction_method: options.correction_method,
    confidence_level: options.confidence_level,
    metrics,
    summary,
    sample_size_adequate: plan.is_adequate,
    srm,
    sequential_testing: e.sequential_testing_enabled ? sequentialBlock(e, primaryTotals, storedSequentialAlpha(e), firstTreatment) : null,
    bayesian_results: e.bayesian_enabled ? bayesianBlock(e, primaryTotals) : null,
    breakdown,
    analysis_status: 'ga',
  };
}
