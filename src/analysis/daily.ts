/**
 * Daily results: for every UTC day from the first with data, each metric's numbers as they stood at the end of that
 * day (cumulative), with the raw p-value of each treatment against the control. A metric naming a metric library
 * definition is analysed per the definition on its users' values cumulated to the day (new fields: the difference and
 * relative difference with their intervals).
 */
import type { DefinitionSettings, ExperimentSettings, VariantUserValues } from './types.js';
import { compareArms, finite, meanOf, metricKind } from './compare.js';
import { definitionRef } from './definition-arms.js';
import { definitionMetricResult } from './definitions.js';
import { armTotals, controlOf, daysOf, metricHeader, totalsOf, type Metric, type Snapshot } from './snapshot.js';
import type { DailyResults } from './model.js';

export type { DailyResults };

/** Per metric id naming a definition: the definition and, per variant id, each user's values per UTC day with events. */
export type DefinitionDays = Map<string, DefinitionDaysOf>;
interface DefinitionDaysOf {
  definition: DefinitionSettings;
  days: Map<string, Array<{ user: string; day: string; values: number[] }>>;
}

type Day = DailyResults['metrics'][number]['days'][number];

/** A definition metric's days: each user's values summed to the end of each day, analysed per the definition. */
function definitionDays(e: ExperimentSettings, m: Metric, snapshot: Snapshot, days: string[], named: DefinitionDaysOf): Day[] {
  const running = new Map(e.variants.map((v) => [v.id, new Map<string, number[]>()]));
  const pending = new Map(e.variants.map((v) => [v.id, [...(named.days.get(v.id) ?? [])].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0))]));
  return days.map((day) => {
    const totals = armTotals(snapshot, m.event_name, day);
    const values: VariantUserValues[] = e.variants.map((v) => {
      const users = running.get(v.id)!;
      const queue = pending.get(v.id)!;
      while (queue.length && queue[0].day <= day) {
        const r = queue.shift()!;
        const sums = users.get(r.user);
        if (sums) r.values.forEach((x, i) => { sums[i] += x; });
        else users.set(r.user, [...r.values]);
      }
      return { variantId: v.id, users: totalsOf(totals, v.id).users, rows: [...users.values()].map((r) => [...r]) };
    });
    const r = definitionMetricResult(m, named.definition, values, e.variants, { correction_method: 'none', confidence_level: e.confidence_level });
    return {
      date: day,
      variants: r.variants.map((v, i) => {
        const d = r.definition!.variants[i];
        return {
          variant_id: v.variant_id, variant_name: v.variant_name, sample_size: v.sample_size, conversions: v.conversions, mean: v.mean, p_value: v.p_value,
          difference: d.difference, difference_ci: d.difference_ci, relative_difference: d.relative_difference, relative_ci: d.relative_ci,
        };
      }),
    };
  });
}

export function dailyResults(e: ExperimentSettings, snapshot: Snapshot, computedAt: Date, named: DefinitionDays = new Map()): DailyResults {
  const days = daysOf(snapshot);
  const control = controlOf(e);
  return {
    experiment_id: e.id,
    experiment_name: e.name,
    analysis_status: 'ga',
    computed_at: computedAt.toISOString(),
    metrics: e.metrics.map((m) => {
      const kind = metricKind(m.metric_type);
      const defined = named.get(m.id);
      if (defined) return { ...metricHeader(m), days: definitionDays(e, m, snapshot, days, defined), definition: definitionRef(defined.definition) };
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
