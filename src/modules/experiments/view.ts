import type { ExperimentRow, MetricRow, VariantRow } from '../../db/schema/experiments.js';
import type { ExperimentView } from './schemas.js';

/** The HTTP response shape of an experiment (routes only; other modules read the read model's domain type). */
export function toExperimentView(row: ExperimentRow, variants: VariantRow[], metrics: MetricRow[]): ExperimentView {
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    description: row.description,
    hypothesis: row.hypothesis,
    experiment_type: row.experimentType,
    status: row.status,
    variants: variants.map((v) => ({
      id: v.id,
      name: v.name,
      description: v.description,
      is_control: v.isControl,
      traffic_allocation: v.trafficAllocation,
      configuration: v.configuration,
    })),
    metrics: metrics.map((m) => ({
      id: m.id,
      name: m.name,
      description: m.description,
      event_name: m.eventName,
      metric_type: m.metricType,
      is_primary: m.isPrimary,
      expected_effect: m.expectedEffect,
      metric_definition_id: m.metricDefinitionId,
    })),
    targeting_rules: row.targetingRules,
    correction_method: row.correctionMethod,
    confidence_level: row.confidenceLevel,
    sequential_testing_enabled: row.sequentialTestingEnabled,
    sequential_testing_config: row.sequentialTestingConfig as Record<string, unknown> | null,
    variance_reduction_config: row.varianceReductionConfig as Record<string, unknown> | null,
    bayesian_enabled: row.bayesianEnabled,
    bayesian_config: row.bayesianConfig as Record<string, unknown> | null,
    bayesian_decision: row.bayesianDecision,
    split_url_config: row.splitUrlConfig,
    metadata: row.metadata,
    start_date: row.startDate,
    end_date: row.endDate,
    owner_id: row.ownerId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
