import { Type, type Static } from 'typebox';
import { CAPPING_TYPES, METRIC_AGGREGATES, METRIC_KINDS } from '../../db/schema/metric-definitions.js';
import { DateTime, Nullable, Pagination, StringEnum, Uuid } from '../../platform/schemas.js';

export const MAX_TAGS = 20;

const Name = Type.String({ minLength: 1, maxLength: 255 });
const EventName = Type.String({ minLength: 1, maxLength: 255, description: 'A tracked event name' });
const Aggregate = StringEnum(METRIC_AGGREGATES, { description: 'Per-user value: the count of the events, or the sum of their values' });
const Probability = Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 });

export const EventAggregate = Type.Object(
  { event_name: EventName, aggregate: Aggregate },
  { additionalProperties: false },
);

/** One object with optional fields (not a union), so a missing or misplaced field is one 422 at its own loc. */
export const Capping = Type.Object(
  {
    type: StringEnum(CAPPING_TYPES),
    value: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'absolute: the cap per user' })),
    p: Type.Optional({ ...Probability, description: 'percentile: the pooled percentile of per-user values, e.g. 0.999' }),
  },
  { additionalProperties: false, description: 'Capping of per-user values before means and ratios (mean and ratio metrics)' },
);

const settable = {
  description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  event_name: Type.Optional(EventName),
  aggregate: Type.Optional(Aggregate),
  numerator: Type.Optional(EventAggregate),
  denominator: Type.Optional(EventAggregate),
  quantile: Type.Optional({ ...Probability, description: 'quantile metrics: p, e.g. 0.9 for p90' }),
  capping: Type.Optional(Capping),
  higher_is_better: Type.Optional(Type.Boolean()),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: MAX_TAGS })),
  owner: Type.Optional(Nullable(Type.String({ maxLength: 255, description: 'Who answers for the metric (a person or team)' }))),
};

export const MetricDefinitionCreate = Type.Object(
  { name: Name, kind: StringEnum(METRIC_KINDS), ...settable },
  {
    additionalProperties: false,
    description:
      'proportion: event_name. mean: event_name and aggregate. ratio: numerator and denominator. quantile: event_name, aggregate and quantile. capping: mean and ratio only.',
    examples: [
      {
        name: 'Revenue per session',
        kind: 'ratio',
        numerator: { event_name: 'purchase', aggregate: 'sum' },
        denominator: { event_name: 'session_start', aggregate: 'count' },
        capping: { type: 'percentile', p: 0.999 },
        higher_is_better: true,
        tags: ['revenue'],
        owner: 'Growth team',
      },
      { name: 'p90 page load time', kind: 'quantile', event_name: 'page_load', aggregate: 'sum', quantile: 0.9, higher_is_better: false },
    ],
  },
);
export type MetricDefinitionCreate = Static<typeof MetricDefinitionCreate>;

export const MetricDefinitionUpdate = Type.Object(
  { name: Type.Optional(Name), kind: Type.Optional(StringEnum(METRIC_KINDS)), ...settable },
  {
    additionalProperties: false,
    description: 'Fields left out keep their value. A new kind drops the old kind\'s event fields (and capping where the new kind takes none).',
    examples: [{ capping: { type: 'absolute', value: 500 } }],
  },
);
export type MetricDefinitionUpdate = Static<typeof MetricDefinitionUpdate>;

export const MetricDefinitionView = Type.Object({
  id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  kind: StringEnum(METRIC_KINDS),
  event_name: Nullable(Type.String()),
  aggregate: Nullable(Aggregate),
  numerator: Nullable(EventAggregate),
  denominator: Nullable(EventAggregate),
  quantile: Nullable(Type.Number()),
  capping: Capping,
  higher_is_better: Type.Boolean(),
  tags: Type.Array(Type.String()),
  owner: Nullable(Type.String()),
  created_by: Nullable(Uuid()),
  version: Type.Integer({ minimum: 1, description: '1 on create, one more on every edit that changes the definition' }),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export type MetricDefinitionView = Static<typeof MetricDefinitionView>;

export const MetricDefinitionParams = Type.Object({ metric_definition_id: Uuid() });

export const MetricDefinitionListQuery = Type.Object({
  kind: Type.Optional(StringEnum(METRIC_KINDS)),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Only definitions carrying this tag' })),
  ...Pagination({ limit: 100, max: 500 }).properties,
});
export type MetricDefinitionListQuery = Static<typeof MetricDefinitionListQuery>;
