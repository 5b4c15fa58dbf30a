/**
 * The analysis of an experiment (the results payload of the spec, "Results payload", without the experiment's
 * envelope, which results add) from its settings and snapshot: pure, so every number can be checked against src/stats
 * directly.
 */
import type { CorrectionMethod } from './domain.js';
import type { DefinitionSettings, ExperimentSettings, VariantUserColumns, VariantUserValues } from './types.js';
import { definitionMetricResult } from './definitions.js';
import { bayesianBlock } from './bayesian.js';
import { alphaFor, metricKind, TEST_OF, variantResults } from './compare.js';
import { judge, srmBlock } from './judgement.js';
import type { AnalysisResults, Diagnostics, MetricResult } from './model.js';
import { sampleSizePlan } from './sample-size.js';
import type { SegmentedResults } from './segments.js';
import { sequentialBlock } from './sequential.js';
import { armTotals, assignedUsers, metricHeader, primaryMetric, treatmentsOf, type Snapshot } from './snapshot.js';
import { CONTEXT_VALUES_LIMIT } from './domain.js';
import { sequentialSrmBlock, srmDiagnosis } from './srm.js';

export interface ResultsOptions {
  correction_method: CorrectionMethod;
  confidence_level: number;
}

export type { AnalysisResults };

/** Spec, "How results are judged" 4: sequential testing embedded at the stored alpha, control vs first treatment. */
export function storedSequentialAlpha(e: ExperimentSettings): number {
  const alpha = (e.sequential_testing_config as { alpha?: number } | null)?.alpha;
  return typeof alpha === 'number' ? alpha : 0.05;
}

/** Users exposed to more than one variant, per assigned variant (snapshot.excludedAssignments). */
export function diagnosticsOf(e: ExperimentSettings, snapshot: Snapshot): Diagnostics {
  const users = assignedUsers({ assignments: snapshot.excludedAssignments ?? [], metrics: {} });
  const excluded = [...users.values()].reduce((a, b) => a + b, 0);
  return {
    multiple_exposure_users: excluded,
    excluded_users: excluded,
    excluded_by_variant: e.variants.map((v) => ({ variant_id: v.id, variant_name: v.name, users: users.get(v.id) ?? 0 })),
  };
}

/** Per metric id, the definition a metric names (as read now) and its per-user values. */
export type DefinitionInputs = Map<string, { definition: DefinitionSettings; values: ReadonlyArray<VariantUserValues | VariantUserColumns> }>;

export function buildResults(
  e: ExperimentSettings, snapshot: Snapshot, options: ResultsOptions, breakdown: SegmentedResults | null, autoPause = false,
  definitions: DefinitionInputs = new Map(),
): AnalysisResults {
  const metrics = e.metrics.map((m): MetricResult => {
    const named = definitions.get(m.id);
    if (named) return definitionMetricResult(m, named.definition, named.values, e.variants, options);
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
  // A primary metric naming a definition is planned, tested sequentially and analysed Bayesian-wise per the definition.
  const primaryNamed = primary ? definitions.get(primary.id) : undefined;
  const plan = sampleSizePlan(e, primaryTotals, options, primary, primaryNamed);
  // The sample-ratio checks count every assignment, excluded users included: randomisation assigned them.
  const everyAssignment = [...snapshot.assignments, ...(snapshot.excludedAssignments ?? [])];
  const srm = srmBlock(e, assignedUsers({ assignments: everyAssignment, metrics: {} }), {
    sequential: sequentialSrmBlock(e, everyAssignment),
    diagnosis: snapshot.contexts ? srmDiagnosis(e, snapshot.contexts.counts, snapshot.contexts.overLimit, CONTEXT_VALUES_LIMIT) : null,
    auto_pause: autoPause,
  });
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
    correction_method: options.correction_method,
    confidence_level: options.confidence_level,
    metrics,
    summary,
    sample_size_adequate: plan.is_adequate,
    srm,
    sequential_testing: e.sequential_testing_enabled ? sequentialBlock(e, primaryTotals, storedSequentialAlpha(e), firstTreatment, primary, primaryNamed) : null,
    bayesian_results: e.bayesian_enabled ? bayesianBlock(e, primaryTotals, primary, primaryNamed) : null,
    breakdown,
    diagnostics: diagnosticsOf(e, snapshot),
  };
}
