import type { AnalysedExperiment } from './experiment.js';
import type { AssignmentDay, ContextCount, GroupStats, MetricDay } from './store.js';

/**
 * What the results of an experiment are computed from: per variant and UTC day, the assigned users and, per metric
 * event name, the day deltas of the sufficient statistics, without the users exposed to more than one variant (their
 * assignments apart, for the sample-ratio check); assigned users per context value for the SRM diagnosis. Small
 * (variants x days x metrics rows, plus the context values) and cached.
 */
export interface Snapshot {
  assignments: AssignmentDay[];
  metrics: Record<string, MetricDay[]>;
  /** Assignments of the excluded users, per variant and day (empty when none). */
  excludedAssignments?: AssignmentDay[];
  contexts?: { counts: ContextCount[]; overLimit: string[] };
}

/** Sufficient statistics of one variant for one metric. */
export type ArmTotals = GroupStats;

export type Variant = AnalysedExperiment['variants'][number];
export type Metric = AnalysedExperiment['metrics'][number];

const EMPTY: ArmTotals = { users: 0, converters: 0, eventCount: 0, countSquares: 0, valueSum: 0, valueSquares: 0 };

/** Per variant id, the totals of a metric over the days up to `lastDay` (inclusive; all days when absent). */
export function armTotals(snapshot: Snapshot, eventName: string, lastDay?: string): Map<string, ArmTotals> {
  const out = new Map<string, ArmTotals>();
  const entry = (variantId: string) => {
    let t = out.get(variantId);
    if (!t) out.set(variantId, (t = { ...EMPTY }));
    return t;
  };
  for (const a of snapshot.assignments) {
    if (lastDay === undefined || a.day <= lastDay) entry(a.variantId).users += a.users;
  }
  for (const d of snapshot.metrics[eventName] ?? []) {
    if (lastDay !== undefined && d.day > lastDay) continue;
    const t = entry(d.variantId);
    t.converters += d.converters;
    t.eventCount += d.eventCount;
    t.countSquares += d.countSquares;
    t.valueSum += d.valueSum;
    t.valueSquares += d.valueSquares;
  }
  return out;
}

export const totalsOf = (totals: Map<string, ArmTotals>, variantId: string): ArmTotals => totals.get(variantId) ?? { ...EMPTY };

/** Assigned users per variant id over all days. */
export function assignedUsers(snapshot: Snapshot): Map<string, number> {
  const out = new Map<string, number>();
  for (const a of snapshot.assignments) out.set(a.variantId, (out.get(a.variantId) ?? 0) + a.users);
  return out;
}

/** Every UTC day from the first to the last day with data, in order. */
export function daysOf(snapshot: Snapshot): string[] {
  const seen = [...snapshot.assignments.map((a) => a.day), ...Object.values(snapshot.metrics).flat().map((d) => d.day)].sort();
  if (seen.length === 0) return [];
  const days: string[] = [];
  const last = Date.parse(`${seen[seen.length - 1]}T00:00:00Z`);
  for (let t = Date.parse(`${seen[0]}T00:00:00Z`); t <= last; t += 86_400_000) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** How every analysis names a metric. */
export const metricHeader = (m: Metric) => ({ metric_id: m.id, metric_name: m.name, metric_type: m.metric_type, is_primary: m.is_primary });

/** The metric results are judged on: the one flagged primary, else the first. */
export const primaryMetric = (e: AnalysedExperiment): Metric | undefined => e.metrics.find((m) => m.is_primary) ?? e.metrics[0];
export const controlOf = (e: AnalysedExperiment): Variant | undefined => e.variants.find((v) => v.is_control);
/** Treatments in created order (the view lists variants by created_at, then id). */
export const treatmentsOf = (e: AnalysedExperiment): Variant[] => e.variants.filter((v) => !v.is_control);

/** Metrics grouped by the window they need, so that metrics with the same watermark are read or rolled up at once. */
/** The distinct event names of an experiment's metrics (one rollup stream each). */
export const eventNamesOf = (e: { metrics: Array<{ event_name: string }> }): string[] => [...new Set(e.metrics.map((m) => m.event_name))];

export function familiesOf<W>(names: string[], windowOf: (name: string) => W | undefined): Array<{ names: string[]; window: W }> {
  const families = new Map<string, { names: string[]; window: W }>();
  for (const name of names) {
    const window = windowOf(name);
    if (window === undefined) continue;
    const key = JSON.stringify(window);
    const family = families.get(key);
    if (family) family.names.push(name);
    else families.set(key, { names: [name], window });
  }
  return [...families.values()];
}
