import { randomUUID } from 'node:crypto';
import { toIsoMicros } from '../../db/schema/exact-timestamp.js';
import type { ExperimentRow, MetricRow, VariantRow } from '../../db/schema/experiments.js';
import type { ExperimentStatus } from './domain.js';
import { canonicalJson } from '../../platform/canonical-json.js';
import { BadRequest, Conflict, Unprocessable } from '../../platform/errors.js';
import type { ExperimentSchedule, MetricInput, VariantInput } from './schemas.js';
import type { ExperimentChange } from './store.js';

/** Request bodies to stored fields and the schedule rules, as pure functions (create, update, clone and schedule). */

export const END_BEFORE_START = 'Value error, end_date must be after start_date';
export const fieldLocked = (field: string, status: ExperimentStatus) => `Cannot update ${field} for experiments in ${status} status`;

export type VariantFields = Omit<VariantRow, 'id' | 'experimentId' | 'createdAt'>;
export type MetricFields = Omit<MetricRow, 'id' | 'experimentId' | 'createdAt'>;

/** Rows of one request get ascending ids, so "created_at then id" (spec) is the order they were sent in. */
export function ascendingIds(count: number): string[] {
  return Array.from({ length: count }, () => randomUUID()).sort();
}

export const variantFields = (v: VariantInput): VariantFields => ({
  name: v.name,
  description: v.description ?? null,
  isControl: v.is_control ?? false,
  trafficAllocation: v.traffic_allocation,
  configuration: v.configuration ?? null,
});

export const metricFields = (m: MetricInput): MetricFields => ({
  name: m.name,
  description: m.description ?? null,
  eventName: m.event_name,
  metricType: m.metric_type ?? 'conversion',
  isPrimary: m.is_primary ?? false,
  expectedEffect: m.expected_effect ?? null,
  metricDefinitionId: m.metric_definition_id ?? null,
});

export const sameVariants = (a: VariantFields[], b: VariantFields[]) => canonicalJson(a) === canonicalJson(b);

/**
 * Schedule rules shared by PUT and PUT /schedule: start_date is fixed once the experiment has started, nothing
 * is scheduled on a finished experiment, and the end must come after the start.
 */
export function scheduleChange(row: ExperimentRow, body: ExperimentSchedule): Pick<ExperimentChange, 'startDate' | 'endDate'> {
  const change: Pick<ExperimentChange, 'startDate' | 'endDate'> = {};
  if (body.start_date === undefined && body.end_date === undefined) return change;
  if (row.status === 'completed' || row.status === 'archived') {
    throw new Conflict(`Cannot schedule an experiment in ${row.status} status`);
  }
  if (body.start_date !== undefined) {
    const start = body.start_date === null ? null : toIsoMicros(body.start_date);
    if (row.status !== 'draft' && start !== row.startDate) throw new BadRequest(fieldLocked('start_date', row.status));
    change.startDate = start;
  }
  if (body.end_date !== undefined) change.endDate = body.end_date === null ? null : toIsoMicros(body.end_date);
  const start = change.startDate !== undefined ? change.startDate : row.startDate;
  const end = change.endDate !== undefined ? change.endDate : row.endDate;
  if (start && end && end <= start) {
    throw new Unprocessable({ type: 'value_error', loc: ['body', 'end_date'], msg: END_BEFORE_START });
  }
  return change;
}
