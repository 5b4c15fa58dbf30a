/**
 * Reading a snapshot (types.ts): an arm's totals over its days, the experiment's control, treatments and primary
 * metric, and how every analysis names a metric.
 */
import type { ExperimentSettings, GroupStats, Snapshot } from './types.js';

export type { Snapshot };

/** Sufficient statistics of one variant for one metric. */
export type ArmTotals = GroupStats;

export type Variant = ExperimentSettings['variants'][number];
export type Metric = ExperimentSettings['metrics'][number];

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
export const primaryMetric = (e: ExperimentSettings): Metric | undefined => e.metrics.find((m) => m.is_primary) ?? e.metrics[0];
export const controlOf = (e: ExperimentSettings): Variant | undefined => e.variants.find((v) => v.is_control);
/** Treatments in created order (the view lists variants by created_at, then id). */
export const treatmentsOf = (e: ExperimentSettings): Variant[] => e.variants.filter((v) => !v.is_control);
