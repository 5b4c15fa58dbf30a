import { Readable } from 'node:stream';
import { STREAM_PAGE_SIZE, type CreatedPeriod, type Cursor } from '../../db/paging.js';
import type { Clock } from '../../platform/clock.js';
import { NotFound } from '../../platform/errors.js';
import { EXPERIMENT_NOT_FOUND } from '../experiments/domain.js';
import { typedFieldsOf } from '../feature-flags/service.js';
import { csvLine, type Cell } from '../../platform/csv.js';
import type { MetricDefinitionView } from '../metric-definitions/schemas.js';
import type { MetricResult } from '../../analysis/model.js';
import { METRIC_DEFINITION_COLUMNS, METRIC_RESULT_COLUMNS, metricDefinitionRow, metricResultRows } from './metric-rows.js';
import { parsePeriod, periodBounds } from './period.js';
import type { ExperimentReport, ExperimentRow, FlagRow, MetricResultRow, Overview, PeriodQuery, Recommendation, VariantRow } from './schemas.js';

/** One variant's numbers as GET /results gives them for the primary metric at the stored settings (rule 6). */
export interface VariantResult {
  sampleSize: number;
  conversions: number;
  mean: number;
  /** Unadjusted; null for the control. */
  pValue: number | null;
  /** Judged on the corrected p-value at the experiment's confidence level. */
  isSignificant: boolean;
  /** null for the control. */
  relativeImprovementPct: number | null;
}

export interface ExperimentResults {
  /** The winning variant's name, or null. */
  winnerVariant: string | null;
  /** summary.recommendation, INCONCLUSIVE when the sample-ratio check failed (rule 7). */
  recommendation: Recommendation;
  byVariantId: Record<string, VariantResult>;
  /** The metrics that name a metric library definition, as GET /results gives them (with their `definition` block). */
  definitionMetrics: MetricResult[];
}

/** The results engine as the export reads it: null when an experiment's results cannot be computed. */
export interface ResultsSource {
  exportResults(experimentId: string): Promise<ExperimentResults | null>;
}

/** What the export reads, each through the module that owns the data (never their tables). */
export interface ExportDeps {
  clock: Clock;
  results: ResultsSource;
  experiments: {
    exportPage(period: CreatedPeriod, cursor?: Cursor): Promise<ExperimentRecord[]>;
    exportRecord(id: string): Promise<ExperimentRecord | undefined>;
    exportVariants(experimentIds: string[]): Promise<Array<{ id: string; experimentId: string; name: string; isControl: boolean }>>;
    periodSummary(period: CreatedPeriod): Promise<{ total: number; active: number; completed: number; averageDurationDays: number | null }>;
  };
  flags: {
    exportPage(period: CreatedPeriod, cursor?: Cursor): Promise<FlagRecord[]>;
    periodSummary(period: CreatedPeriod): Promise<{ total: number; active: number }>;
  };
  /** The metric library: definitions created in a period, a page at a time (`createdAt` is the cursor). */
  definitions: {
    exportPage(period: CreatedPeriod, cursor?: Cursor): Promise<Array<MetricDefinitionView & { createdAt: string }>>;
  };
  tracking: {
    experimentTotals(experimentIds: string[]): Promise<Map<string, { assignments: number; events: number }>>;
    flagEventCounts(flagIds: string[]): Promise<Map<string, number>>;
    periodCounts(period: CreatedPeriod): Promise<{ assignments: number; events: number }>;
  };
}

export interface ExperimentRecord {
  id: string;
  name: string;
  status: ExperimentRow['status'];
  experimentType: ExperimentRow['experiment_type'];
  startDate: string | null;
  endDate: string | null;
  createdAt: string;
}

/** A flag as the flags module's export page gives it: its typed fields as stored (feature-flags' `typedFieldsOf` reads them). */
export type FlagRecord = Parameters<typeof typedFieldsOf>[0] & {
  id: string;
  key: string;
  name: string;
  status: FlagRow['status'];
  rolloutPercentage: number;
  createdAt: string;
  updatedAt: string;
};

type Totals = { assignments: number; events: number };

export type ExportFormat = 'csv' | 'json';

/** What a file route sends: headers and a body streamed row by row. */
export interface ExportFile {
  headers: Record<string, string>;
  body: Readable;
}

export const EXPERIMENT_COLUMNS = [
  'experiment_id', 'experiment_name', 'status', 'experiment_type', 'start_date', 'end_date', 'duration_days',
  'total_assignments', 'total_events', 'winner_variant', 'recommendation',
] as const satisfies ReadonlyArray<keyof ExperimentRow>;
export const VARIANT_COLUMNS = [
  'experiment_id', 'experiment_name', 'variant_id', 'variant_name', 'is_control', 'assignments', 'conversions',
  'conversion_rate', 'p_value', 'is_significant', 'relative_improvement_pct',
] as const satisfies ReadonlyArray<keyof VariantRow>;
export const FLAG_COLUMNS = [
  'flag_id', 'flag_key', 'flag_name', 'status', 'rollout_percentage', 'total_evaluations', 'enabled_evaluations',
  'enabled_rate', 'created_at', 'updated_at', 'value_type', 'variations', 'default_variation', 'off_variation',
  'variation_rules', 'variation_split',
] as const satisfies ReadonlyArray<keyof FlagRow>;

const DAY_MS = 86_400_000;
const JSON_TYPE = 'application/json; charset=utf-8';

/** Stored times are written as stored, without their offset (rule 5): 2024-05-01T13:59:59.500000. */
const withoutOffset = (iso: string | null) => (iso === null ? null : iso.replace(/(Z|[+-]\d{2}:?\d{2})$/i, ''));

/** `<kind>_YYYYMMDD_HHMMSS.csv` in UTC (rule 2). */
export function exportFileName(kind: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('T', '_').slice(0, 15);
  return `${kind}_${stamp}.csv`;
}

function durationDays(startDate: string | null, endDate: string | null, now: Date): number | null {
  if (!startDate) return null;
  const end = endDate ? Date.parse(endDate) : now.getTime();
  return Math.round(((end - Date.parse(startDate)) / DAY_MS) * 100) / 100;
}

function experimentRow(e: ExperimentRecord, totals: Totals | undefined, results: ExperimentResults | null, now: Date): ExperimentRow {
  return {
    experiment_id: e.id,
    experiment_name: e.name,
    status: e.status,
    experiment_type: e.experimentType,
    start_date: withoutOffset(e.startDate),
    end_date: withoutOffset(e.endDate),
    duration_days: durationDays(e.startDate, e.endDate, now),
    total_assignments: totals?.assignments ?? 0,
    total_events: totals?.events ?? 0,
    winner_variant: results?.winnerVariant ?? null,
    recommendation: results?.recommendation ?? null,
  };
}

function variantRow(
  e: { id: string; name: string },
  v: { id: string; name: string; isControl: boolean },
  results: ExperimentResults | null,
): VariantRow {
  const r = results?.byVariantId[v.id];
  return {
    experiment_id: e.id,
    experiment_name: e.name,
    variant_id: v.id,
    variant_name: v.name,
    is_control: v.isControl,
    assignments: r?.sampleSize ?? null,
    conversions: r?.conversions ?? null,
    conversion_rate: r?.mean ?? null,
    p_value: r && !v.isControl ? r.pValue : null,
    is_significant: r?.isSignificant ?? null,
    relative_improvement_pct: r && !v.isControl ? r.relativeImprovementPct : null,
  };
}

function flagRow(f: FlagRecord, totalEvaluations: number): FlagRow {
  return {
    flag_id: f.id,
    flag_key: f.key,
    flag_name: f.name,
    status: f.status,
    rollout_percentage: f.rolloutPercentage,
    total_evaluations: totalEvaluations,
    enabled_evaluations: 0,
    enabled_rate: 0.0,
    created_at: f.createdAt,
    updated_at: f.updatedAt,
    ...typedFieldsOf(f),
  };
}

/** Every row of a keyset-paged query; the caller reads the first page, so a failure there is a clean 500. */
async function* allPages<T extends Cursor, R>(
  first: T[],
  next: (cursor: Cursor) => Promise<T[]>,
  toRows: (page: T[]) => Promise<R[]>,
): AsyncGenerator<R> {
  let page = first;
  while (page.length > 0) {
    yield* await toRows(page);
    if (page.length < STREAM_PAGE_SIZE) return;
    const last = page[page.length - 1];
    page = await next({ createdAt: last.createdAt, id: last.id });
  }
}

async function* encode<R extends object>(rows: AsyncIterable<R>, format: ExportFormat, columns: ReadonlyArray<keyof R>): AsyncGenerator<string> {
  if (format === 'csv') {
    yield csvLine(columns.map(String));
    // A structured cell (a typed flag's variations, rules, split) is its JSON text in the CSV; the JSON file keeps it.
    for await (const row of rows) yield csvLine(columns.map((c) => (typeof row[c] === 'object' && row[c] !== null ? JSON.stringify(row[c]) : (row[c] as Cell))));
    return;
  }
  let first = true;
  yield '[';
  for await (const row of rows) {
    yield (first ? '' : ',') + JSON.stringify(row);
    first = false;
  }
  yield ']';
}

export type ExportService = ReturnType<typeof createExportService>;

export function createExportService(deps: ExportDeps) {
  const { clock } = deps;
  const resultsFor = (id: string) => deps.results.exportResults(id);

  /** Results one experiment at a time, so a large export holds one page of rows and one result set in memory. */
  async function withResults<T extends { id: string }>(experiments: T[]) {
    const out: Array<{ experiment: T; results: ExperimentResults | null }> = [];
    for (const experiment of experiments) out.push({ experiment, results: await resultsFor(experiment.id) });
    return out;
  }

  async function experimentRowsOf(page: ExperimentRecord[]): Promise<ExperimentRow[]> {
    const totals = await deps.tracking.experimentTotals(page.map((e) => e.id));
    return (await withResults(page)).map(({ experiment, results }) => experimentRow(experiment, totals.get(experiment.id), results, clock.now()));
  }

  async function variantRowsOf(experiments: ExperimentRecord[]): Promise<VariantRow[]> {
    const variants = await deps.experiments.exportVariants(experiments.map((e) => e.id));
    const rows: VariantRow[] = [];
    for (const { experiment, results } of await withResults(experiments)) {
      for (const v of variants.filter((x) => x.experimentId === experiment.id)) rows.push(variantRow(experiment, v, results));
    }
    return rows;
  }

  async function metricRowsOf(experiments: ExperimentRecord[]): Promise<MetricResultRow[]> {
    return (await withResults(experiments)).flatMap(({ experiment, results }) => metricResultRows(experiment, results?.definitionMetrics ?? []));
  }

  function file<R extends object>(kind: string, format: ExportFormat, columns: ReadonlyArray<keyof R>, rows: AsyncIterable<R>): ExportFile {
    const headers: Record<string, string> = format === 'csv'
      ? { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${exportFileName(kind, clock.now())}"` }
      : { 'content-type': JSON_TYPE };
    return { headers, body: Readable.from(encode(rows, format, columns)) };
  }

  async function experimentRecord(id: string): Promise<ExperimentRecord> {
    const record = await deps.experiments.exportRecord(id);
    if (!record) throw new NotFound(EXPERIMENT_NOT_FOUND);
    return record;
  }

  return {
    async experiments(format: ExportFormat, query: PeriodQuery): Promise<ExportFile> {
      const period = parsePeriod(query.start_date, query.end_date);
      const first = await deps.experiments.exportPage(period);
      const rows = allPages(first, (c) => deps.experiments.exportPage(period, c), experimentRowsOf);
      return file('experiments', format, EXPERIMENT_COLUMNS, rows);
    },

    async variants(format: ExportFormat, query: PeriodQuery): Promise<ExportFile> {
      const period = parsePeriod(query.start_date, query.end_date);
      const first = await deps.experiments.exportPage(period);
      return file('variants', format, VARIANT_COLUMNS, allPages(first, (c) => deps.experiments.exportPage(period, c), variantRowsOf));
    },

    /** A row per variant of each metric naming a metric library definition, for the experiments created in the period. */
    async metricResults(format: ExportFormat, query: PeriodQuery): Promise<ExportFile> {
      const period = parsePeriod(query.start_date, query.end_date);
      const first = await deps.experiments.exportPage(period);
      return file('metric_results', format, METRIC_RESULT_COLUMNS, allPages(first, (c) => deps.experiments.exportPage(period, c), metricRowsOf));
    },

    /** The metric library: a row per definition created in the period. */
    async metricDefinitions(format: ExportFormat, query: PeriodQuery): Promise<ExportFile> {
      const period = parsePeriod(query.start_date, query.end_date);
      const first = await deps.definitions.exportPage(period);
      const rows = allPages(first, (c) => deps.definitions.exportPage(period, c), async (page) => page.map(metricDefinitionRow));
      return file('metric_definitions', format, METRIC_DEFINITION_COLUMNS, rows);
    },

    async featureFlags(format: ExportFormat, query: PeriodQuery): Promise<ExportFile> {
      const period = parsePeriod(query.start_date, query.end_date);
      const first = await deps.flags.exportPage(period);
      const rows = allPages(first, (c) => deps.flags.exportPage(period, c), async (page) => {
        const counts = await deps.tracking.flagEventCounts(page.map((f) => f.id));
        return page.map((f) => flagRow(f, counts.get(f.id) ?? 0));
      });
      return file('feature_flags', format, FLAG_COLUMNS, rows);
    },

    async overview(query: PeriodQuery): Promise<Overview> {
      const period = parsePeriod(query.start_date, query.end_date);
      const [experiments, flags, tracked] = await Promise.all([
        deps.experiments.periodSummary(period), deps.flags.periodSummary(period), deps.tracking.periodCounts(period),
      ]);
      const bounds = periodBounds(period);
      return {
        generated_at: clock.now().toISOString(),
        period_start: bounds.start?.toISOString() ?? null,
        period_end: bounds.end?.toISOString() ?? null,
        total_experiments: experiments.total,
        active_experiments: experiments.active,
        completed_experiments: experiments.completed,
        total_feature_flags: flags.total,
        active_feature_flags: flags.active,
        total_assignments: tracked.assignments,
        total_events: tracked.events,
        experiments_with_winners: 0,
        average_experiment_duration_days: experiments.averageDurationDays,
      };
    },

    /**
     * JSON: the experiment's row, its variant rows and its metric result rows; CSV: the variant rows with the variants
     * columns, or (rows=metrics) the metric result rows.
     */
    async experimentReport(id: string, format: ExportFormat, rows: 'variants' | 'metrics' = 'variants'): Promise<ExportFile> {
      const record = await experimentRecord(id);
      if (format === 'csv' && rows === 'metrics') return file('experiment_metrics', 'csv', METRIC_RESULT_COLUMNS, Readable.from(await metricRowsOf([record])));
      if (format === 'csv') return file('experiment_report', 'csv', VARIANT_COLUMNS, Readable.from(await variantRowsOf([record])));
      const [results, variants, totals] = await Promise.all([resultsFor(id), deps.experiments.exportVariants([id]), deps.tracking.experimentTotals([id])]);
      const report: ExperimentReport = {
        experiment_id: id,
        experiments: experimentRow(record, totals.get(id), results, clock.now()),
        variants: variants.map((v) => variantRow(record, v, results)),
        metrics: metricResultRows(record, results?.definitionMetrics ?? []),
      };
      return { headers: { 'content-type': JSON_TYPE }, body: Readable.from([JSON.stringify(report)]) };
    },
  };
}
