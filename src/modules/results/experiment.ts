import type { ExperimentSettings } from '../../analysis/types.js';
import { NotFound } from '../../platform/errors.js';
import type { Experiment } from '../experiments/read-model.js';
import { EXPERIMENT_NOT_FOUND } from '../experiments/domain.js';

/** What results need of the experiments module: its read model (one experiment; a page of the active ones, oldest first) and two commands. */
export interface ResultsExperiments {
  experiment(id: string): Promise<Experiment | undefined>;
  activePage(skip: number, limit: number): Promise<Experiment[]>;
  recordBayesianDecision(id: string, decision: Experiment['bayesianDecision']): Promise<void>;
  /** Pauses a running experiment as the system (audited as a pause); false when it was no longer active. */
  pauseAutomatically(id: string): Promise<boolean>;
}

/**
 * An experiment as results read it: the experiments module's domain type (its read model), mapped once to the names
 * the result payloads use. The analysis package's settings (ExperimentSettings), plus what the envelope, the caches
 * and the reads need: status, dates and updated_at. The experiments HTTP shape is not involved.
 */
export interface AnalysedExperiment extends ExperimentSettings {
  status: Experiment['status'];
  experiment_type: Experiment['experimentType'];
  start_date: Experiment['startDate'];
  end_date: Experiment['endDate'];
  /** ISO 8601: part of the live cache keys. */
  updated_at: string;
}

export function analysedExperiment(e: Experiment): AnalysedExperiment {
  return {
    id: e.id,
    name: e.name,
    status: e.status,
    experiment_type: e.experimentType,
    correction_method: e.correctionMethod,
    confidence_level: e.confidenceLevel,
    sequential_testing_enabled: e.sequentialTestingEnabled,
    sequential_testing_config: e.sequentialTestingConfig,
    variance_reduction_config: e.varianceReductionConfig,
    bayesian_enabled: e.bayesianEnabled,
    bayesian_config: e.bayesianConfig,
    bayesian_decision: e.bayesianDecision,
    start_date: e.startDate,
    end_date: e.endDate,
    updated_at: e.updatedAt.toISOString(),
    variants: e.variants.map((v) => ({ id: v.id, name: v.name, is_control: v.isControl, traffic_allocation: v.trafficAllocation })),
    metrics: e.metrics.map((m) => ({
      id: m.id, name: m.name, event_name: m.eventName, metric_type: m.metricType, is_primary: m.isPrimary, expected_effect: m.expectedEffect,
      metric_definition_id: m.metricDefinitionId,
    })),
  };
}

/** The experiment as results read it; 404 when there is none. */
export async function readExperiment(experiments: Pick<ResultsExperiments, 'experiment'>, id: string): Promise<AnalysedExperiment> {
  const e = await experiments.experiment(id);
  if (!e) throw new NotFound(EXPERIMENT_NOT_FOUND);
  return analysedExperiment(e);
}
