/**
 * The metric definition form's state, its checks before sending (mirroring src/modules/metric-definitions: which
 * fields each kind takes, p in (0, 1), a cap above 0, tags of at most 50 characters) and the body it sends, plus the
 * words the dashboard uses for a definition wherever it shows one. Pure: no React, no fetch.
 */
import { problemsOf, requiredText } from '../../components/validate';
import type { MetricDefinition, MetricDefinitionBody, MetricKind } from './hooks';

export type Aggregate = 'count' | 'sum';
export type CappingType = 'none' | 'absolute' | 'percentile';
export interface EventDraft {
  event_name: string;
  aggregate: Aggregate;
}

export interface DefinitionDraft {
  name: string;
  description: string;
  kind: MetricKind;
  event_name: string;
  aggregate: Aggregate;
  numerator: EventDraft;
  denominator: EventDraft;
  /** Text as typed, e.g. "0.9". */
  quantile: string;
  capping: CappingType;
  cap_value: string;
  cap_p: string;
  higher_is_better: boolean;
  /** Comma-separated, as typed. */
  tags: string;
  owner: string;
}

export const MAX_TAGS = 20;
const MAX_TAG_LENGTH = 50;

export const KIND_LABEL: Record<MetricKind, string> = {
  proportion: 'Proportion',
  mean: 'Mean',
  ratio: 'Ratio',
  quantile: 'Quantile',
};
export const KIND_TONE: Record<MetricKind, string> = { proportion: 'info', mean: 'success', ratio: 'warning', quantile: 'neutral' };
export const KIND_HINT: Record<MetricKind, string> = {
  proportion: 'Share of users with at least one event.',
  mean: "Mean per user of an event's count or value sum.",
  ratio: 'Sum of a numerator over sum of a denominator, per variant (delta method).',
  quantile: 'A quantile (p50, p90, …) of per-user values, over users with the event.',
};
/** Capping applies to mean and ratio metrics only (the API refuses it elsewhere). */
export const takesCapping = (kind: MetricKind) => kind === 'mean' || kind === 'ratio';

export function emptyDraft(): DefinitionDraft {
  return {
    name: '',
    description: '',
    kind: 'proportion',
    event_name: '',
    aggregate: 'sum',
    numerator: { event_name: '', aggregate: 'sum' },
    denominator: { event_name: '', aggregate: 'count' },
    quantile: '0.9',
    capping: 'none',
    cap_value: '',
    cap_p: '0.999',
    higher_is_better: true,
    tags: '',
    owner: '',
  };
}

export function draftOf(d: MetricDefinition): DefinitionDraft {
  const empty = emptyDraft();
  return {
    name: d.name,
    description: d.description ?? '',
    kind: d.kind,
    event_name: d.event_name ?? '',
    aggregate: d.aggregate ?? empty.aggregate,
    numerator: d.numerator ?? empty.numerator,
    denominator: d.denominator ?? empty.denominator,
    quantile: d.quantile === null ? empty.quantile : String(d.quantile),
    capping: d.capping.type,
    cap_value: d.capping.value === undefined ? '' : String(d.capping.value),
    cap_p: d.capping.p === undefined ? empty.cap_p : String(d.capping.p),
    higher_is_better: d.higher_is_better,
    tags: d.tags.join(', '),
    owner: d.owner ?? '',
  };
}

export const tagsOf = (text: string): string[] => [...new Set(text.split(',').map((t) => t.trim()).filter(Boolean))];

/** A number strictly between 0 and 1, or the words saying what to type. */
function probabilityProblem(text: string, example: string): string | undefined {
  if (!text.trim()) return 'This field is required.';
  const value = Number(text);
  if (!Number.isFinite(value)) return 'Enter a number.';
  if (value <= 0 || value >= 1) return `Enter a number between 0 and 1 (not 0 or 1), e.g. ${example}.`;
  return undefined;
}

/**
 * Problems keyed as the API's field errors are (`numerator.event_name`, `capping.value`), so one message shows at
 * the field whether the browser or the API found it; null when the draft can be sent.
 */
export function draftProblems(d: DefinitionDraft): Record<string, string> | null {
  const checks: Record<string, string | undefined> = {
    name: requiredText(d.name),
    description: d.description.length > 10_000 ? 'Use at most 10000 characters.' : undefined,
    owner: d.owner.length > 255 ? 'Use at most 255 characters.' : undefined,
  };
  if (d.kind === 'ratio') {
    checks['numerator.event_name'] = requiredText(d.numerator.event_name);
    checks['denominator.event_name'] = requiredText(d.denominator.event_name);
  } else {
    checks.event_name = requiredText(d.event_name);
  }
  if (d.kind === 'quantile') checks.quantile = probabilityProblem(d.quantile, '0.9 for p90');
  if (takesCapping(d.kind) && d.capping === 'absolute') {
    const cap = Number(d.cap_value);
    checks['capping.value'] = !d.cap_value.trim()
      ? 'This field is required.'
      : !Number.isFinite(cap)
        ? 'Enter a number.'
        : cap <= 0
          ? 'Enter a cap above 0.'
          : undefined;
  }
  if (takesCapping(d.kind) && d.capping === 'percentile') checks['capping.p'] = probabilityProblem(d.cap_p, '0.999');
  const tags = tagsOf(d.tags);
  checks.tags =
    tags.length > MAX_TAGS
      ? `Use at most ${MAX_TAGS} tags.`
      : tags.some((t) => t.length > MAX_TAG_LENGTH)
        ? `Keep each tag to at most ${MAX_TAG_LENGTH} characters.`
        : undefined;
  return problemsOf(checks);
}

/**
 * The body for POST, or for PUT (`editing`): every field of the kind (a PUT naming a new kind drops the old kind's
 * fields on the server), capping only for kinds that take it, and an empty owner left to the server on create (it
 * defaults to the creator) but cleared on edit.
 */
export function bodyOf(d: DefinitionDraft, editing: boolean): MetricDefinitionBody {
  const kindFields: Partial<MetricDefinitionBody> =
    d.kind === 'proportion'
      ? { event_name: d.event_name.trim() }
      : d.kind === 'mean'
        ? { event_name: d.event_name.trim(), aggregate: d.aggregate }
        : d.kind === 'quantile'
          ? { event_name: d.event_name.trim(), aggregate: d.aggregate, quantile: Number(d.quantile) }
          : {
              numerator: { event_name: d.numerator.event_name.trim(), aggregate: d.numerator.aggregate },
              denominator: { event_name: d.denominator.event_name.trim(), aggregate: d.denominator.aggregate },
            };
  const capping: MetricDefinitionBody['capping'] =
    d.capping === 'absolute' ? { type: 'absolute', value: Number(d.cap_value) } : d.capping === 'percentile' ? { type: 'percentile', p: Number(d.cap_p) } : { type: 'none' };
  const owner = d.owner.trim();
  return {
    name: d.name.trim(),
    kind: d.kind,
    description: d.description.trim() || null,
    ...kindFields,
    ...(takesCapping(d.kind) ? { capping } : {}),
    higher_is_better: d.higher_is_better,
    tags: tagsOf(d.tags),
    ...(owner ? { owner } : editing ? { owner: null } : {}),
  };
}

/** "p90", "p99.9": a quantile's p as people say it. */
export function quantileLabel(p: number | null | undefined): string {
  if (p === null || p === undefined) return 'quantile';
  return `p${Number((p * 100).toFixed(4))}`;
}

type EventAggregate = { event_name: string; aggregate: Aggregate } | null | undefined;
const amountOf = (e: NonNullable<EventAggregate>) => (e.aggregate === 'sum' ? e.event_name : `${e.event_name} events`);
const unitOf = (e: NonNullable<EventAggregate>) => (e.aggregate === 'sum' ? `${e.event_name} value` : e.event_name);

/** "revenue per page_view": what a ratio's value is. */
export function ratioLabel(numerator: EventAggregate, denominator: EventAggregate): string {
  if (!numerator || !denominator) return 'ratio';
  return `${amountOf(numerator)} per ${unitOf(denominator)}`;
}

/** One line saying what a definition measures, e.g. "p90 of load_time (value sum per user)". */
export function describeDefinition(d: Pick<MetricDefinition, 'kind' | 'event_name' | 'aggregate' | 'numerator' | 'denominator' | 'quantile'>): string {
  const per = d.aggregate === 'count' ? 'event count per user' : 'value sum per user';
  switch (d.kind) {
    case 'proportion':
      return `share of users with ${d.event_name ?? 'the event'}`;
    case 'mean':
      return `mean of ${d.event_name ?? 'the event'} (${per})`;
    case 'ratio':
      return ratioLabel(d.numerator, d.denominator);
    case 'quantile':
      return `${quantileLabel(d.quantile)} of ${d.event_name ?? 'the event'} (${per})`;
  }
}

/** "capped at 500 per user", "capped at the pooled p99.9", or null. */
export function cappingLabel(c: MetricDefinition['capping']): string | null {
  if (c.type === 'absolute') return `capped at ${c.value} per user`;
  if (c.type === 'percentile') return `capped at the pooled ${quantileLabel(c.p)}`;
  return null;
}
