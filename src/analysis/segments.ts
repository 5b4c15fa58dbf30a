/**
 * Results per value of an assignment-context attribute (segment_by). The tested form (segmented results and the
 * `breakdown` of GET /results) applies its own Bonferroni over the segments (spec, "How results are judged" 2); the
 * segment breakdown route reports counts only.
 */
import { bonferroni } from '../stats/index.js';
import type { CorrectionMethod } from './domain.js';
import type { ExperimentSettings } from './types.js';
import { alphaFor, meanOf, metricKind, variantResults } from './compare.js';
import type { DefinitionSettings, SegmentStats, VariantUserValues } from './types.js';
import { definitionRef } from './definition-arms.js';
import { cappingOf, definitionMetricResult, definitionStatsFromValues, definitionValue } from './definitions.js';
import { metricHeader, type ArmTotals, type Metric } from './snapshot.js';
import type { Breakdown, SegmentCounts } from './model.js';

/** Per metric id naming a definition: the definition and, per segment value and variant id, its per-user rows. */
export type DefinitionSegments = Map<string, DefinitionSegment>;
interface DefinitionSegment { definition: DefinitionSettings; rows: DefinitionSegmentRows }
type DefinitionSegmentRows = Map<string | null, Map<string, number[][]>>;

/** Segments listed at most, the largest first; the rest are counted in segments_omitted. */
export const MAX_SEGMENTS = 50;

/** Per segment value, per variant id, the totals of one metric. */
type BySegment = Map<string | null, Map<string, ArmTotals>>;

function bySegment(rows: SegmentStats[]): BySegment {
  const out: BySegment = new Map();
  for (const { segment, variantId, ...totals } of rows) {
    let variants = out.get(segment);
    if (!variants) out.set(segment, (variants = new Map()));
    variants.set(variantId, totals);
  }
  return out;
}

/** A definition metric's per-user values within one segment, per variant (users: the segment's analysed users). */
function segmentValues(e: ExperimentSettings, users: BySegment, rows: DefinitionSegmentRows, segment: string | null): VariantUserValues[] {
  return e.variants.map((v) => ({ variantId: v.id, users: users.get(segment)?.get(v.id)?.users ?? 0, rows: rows.get(segment)?.get(v.id) ?? [] }));
}

/** The segments to list: by assigned users, largest first, then by value (the missing value last). */
function chosenSegments(rows: SegmentStats[]): { segments: Array<string | null>; total: number } {
  const users = new Map<string | null, number>();
  for (const r of rows) users.set(r.segment, (users.get(r.segment) ?? 0) + r.users);
  const ordered = [...users.keys()].sort((a, b) =>
    users.get(b)! - users.get(a)! || (a === null ? 1 : b === null ? -1 : a < b ? -1 : a > b ? 1 : 0));
  return { segments: ordered.slice(0, MAX_SEGMENTS), total: ordered.length };
}

/** The tested form: segmented results and the `breakdown` of GET /results. */
export type SegmentedResults = Breakdown;
export type SegmentMetric = Breakdown['segments'][number]['metrics'][number];

/**
 * Every metric tested within each listed segment; a treatment's p-values over the listed segments are adjusted
 * together by Bonferroni (the experiment's own correction does not apply here).
 */
export function segmentedResults(
  e: ExperimentSettings, attribute: string, statsByEvent: Map<string, SegmentStats[]>, confidenceLevel: number,
  named: DefinitionSegments = new Map(),
): SegmentedResults {
  const allRows = [...statsByEvent.values()][0] ?? [];
  const { segments, total } = chosenSegments(allRows);
  const alpha = alphaFor(confidenceLevel);
  const perSegment = segments.map((segment) => ({ segment, sample_size: 0, metrics: [] as SegmentMetric[] }));
  const users = bySegment(allRows);
  for (const metric of e.metrics) {
    const grouped = bySegment(statsByEvent.get(metric.event_name) ?? []);
    const defined = named.get(metric.id);
    // A definition metric: analysed per the definition within each segment (its block kept), uncorrected before Bonferroni.
    const definitionResults = defined && segments.map((s) => definitionMetricResult(
      metric, defined.definition, segmentValues(e, users, defined.rows, s), e.variants, { correction_method: 'none', confidence_level: confidenceLevel }));
    const raw = definitionResults
      ? definitionResults.map((r) => r.variants)
      : segments.map((s) => variantResults(metricKind(metric.metric_type), e.variants, grouped.get(s) ?? new Map(), 'none' as CorrectionMethod, confidenceLevel));
    for (const v of e.variants.filter((x) => !x.is_control)) {
      const cells = raw.map((results) => results.find((r) => r.variant_id === v.id)!);
      const adjusted = bonferroni(cells.map((c) => c.p_value ?? 1));
      cells.forEach((c, i) => {
        c.adjusted_p_value = c.p_value === null ? null : adjusted[i];
        c.is_significant = c.adjusted_p_value !== null && c.adjusted_p_value < alpha;
      });
    }
    raw.forEach((variants, i) => {
      perSegment[i].sample_size = variants.reduce((n, v) => n + v.sample_size, 0);
      const definition = definitionResults?.[i].definition;
      perSegment[i].metrics.push({ ...metricHeader(metric), variants, ...(definition ? { definition } : {}) });
    });
  }
  return {
    segment_by: attribute,
    correction_method: 'bonferroni',
    confidence_level: confidenceLevel,
    segments_total: total,
    segments_omitted: total - segments.length,
    segments: perSegment,
  };
}

export type { SegmentCounts };

type SegmentDefinition = NonNullable<SegmentCounts['segments'][number]['variants'][number]['metrics'][number]['definition']>;

/**
 * A definition metric's value per variant in each listed segment, from the segment's per-user values as segmented
 * results read them (a percentile cap pooled over the segment's variants, as there); no comparison.
 */
function definitionCounts(
  e: ExperimentSettings, segments: Array<string | null>, users: BySegment, defined: DefinitionSegment,
): Map<string | null, Map<string, SegmentDefinition>> {
  const d = defined.definition;
  return new Map(segments.map((segment) => {
    const stats = definitionStatsFromValues(d, e.variants, segmentValues(e, users, defined.rows, segment), e.confidence_level);
    return [segment, new Map(e.variants.map((v) => {
      const arm = stats.arms.get(v.id)!;
      return [v.id, {
        ...definitionRef(d), value: definitionValue(d, arm), users_with_events: arm.withEvents, capping: cappingOf(d, stats.cap, arm.capped),
      }];
    }))];
  }));
}

/**
 * Counts per segment, variant and metric (no test). `metrics` is the experiment's metrics or the one asked for; a
 * metric naming a definition (`named`) adds the definition's value in each segment and variant.
 */
export function segmentCounts(
  e: ExperimentSettings, attribute: string, metrics: Metric[], statsByEvent: Map<string, SegmentStats[]>, metricId: string | null,
  named: DefinitionSegments = new Map(),
): SegmentCounts {
  const allRows = [...statsByEvent.values()][0] ?? [];
  const { segments, total } = chosenSegments(allRows);
  const grouped = new Map(metrics.map((m) => [m.id, bySegment(statsByEvent.get(m.event_name) ?? [])]));
  const users = bySegment(allRows);
  const defined = new Map(metrics.flatMap((m) => {
    const n = named.get(m.id);
    return n ? [[m.id, definitionCounts(e, segments, users, n)] as const] : [];
  }));
  return {
    experiment_id: e.id,
    segment_by: attribute,
    metric_id: metricId,
    segments_total: total,
    segments_omitted: total - segments.length,
    analysis_status: 'ga',
    segments: segments.map((segment) => ({
      segment,
      variants: e.variants.map((v) => {
        const arm = (m: Metric) => grouped.get(m.id)!.get(segment)?.get(v.id);
        return {
          variant_id: v.id,
          variant_name: v.name,
          users: (metrics[0] && arm(metrics[0])?.users) ?? 0,
          metrics: metrics.map((m) => {
            const t = arm(m);
            const definition = defined.get(m.id)?.get(segment)?.get(v.id);
            return {
              metric_id: m.id,
              metric_name: m.name,
              conversions: t?.converters ?? 0,
              events: t?.eventCount ?? 0,
              value_sum: t?.valueSum ?? 0,
              mean: t ? meanOf(metricKind(m.metric_type), t) : null,
              ...(definition ? { definition } : {}),
            };
          }),
        };
      }),
    })),
  };
}
