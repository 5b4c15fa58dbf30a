/**
 * Daily results: for every UTC day from the first with data, each metric's numbers as they stood at the end of that
 * day (cumulative), with the raw p-value of each treatment against the control.
 */
import type { ExperimentSettings } from './types.js';
import { compareArms, finite, meanOf, metricKind } from './compare.js';
import { armTotals, controlOf, daysOf, metricHeader, totalsOf, type Snapshot } from './snapshot.js';
import type { DailyResults } from './model.js';

export type { DailyResults };

export function dailyResults(e: ExperimentSettings, snapshot: Snapshot, computedAt: Date): DailyResults {
  const days = daysOf(snapshot);
  const control = controlOf(e);
  return {
    experiment_id: e.id,
    experiment_name: e.name,
    analysis_status: 'ga',
    computed_at: computedAt.toISOString(),
    metrics: e.metrics.map((m) => {
      const kind = metricKind(m.metric_type);
      return {
        ...metricHeader(m),
        days: days.map((day) => {
          const totals = armTotals(snapshot, m.event_name, day);
          const controlTotals = control ? totalsOf(totals, control.id) : undefined;
          return {
            date: day,
            variants: e.variants.map((v) => {
              const t = totalsOf(totals, v.id);
              const p = controlTotals && !v.is_control ? compareArms(kind, controlTotals, t, e.confidence_level).p_value : null;
              return { variant_id: v.id, variant_name: v.name, sample_size: t.users, conversions: t.converters, mean: meanOf(kind, t), p_value: finite(p) };
            }),
          };
        }),
      };
    }),
  };
}
