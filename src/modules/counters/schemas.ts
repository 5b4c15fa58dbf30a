import { Type, type Static } from 'typebox';
import { Uuid } from '../../platform/schemas.js';

const CounterName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$', default: 'events' });
const Amount = Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 });

export const CounterParams = Type.Object({ experiment_id: Uuid() });

export const IncrementBody = Type.Object(
  {
    experiment_id: Type.Optional(Uuid({ description: 'When sent, must equal the path experiment_id (else 400)' })),
    counter: Type.Optional(CounterName),
    amount: Type.Optional(Amount),
  },
  { additionalProperties: false, examples: [{ counter: 'clicks', amount: 1 }] },
);
export type IncrementBody = Static<typeof IncrementBody>;

export const BulkBody = Type.Object(
  {
    increments: Type.Array(
      Type.Object({ experiment_id: Uuid(), counter: Type.Optional(CounterName), amount: Type.Optional(Amount) }, { additionalProperties: false }),
      { minItems: 1, maxItems: 100 },
    ),
  },
  { additionalProperties: false, examples: [
    {
      increments: [
        { experiment_id: '3f6c2a8e-5b1d-4c7e-9a2f-1d8b6e4c0a71', counter: 'clicks', amount: 3 },
        { experiment_id: '7a1e9c4b-2d3f-4e8a-b6c5-0f9d8e7a6b52' },
      ],
    },
  ] },
);
export type BulkBody = Static<typeof BulkBody>;

export const CountersView = Type.Object({
  experiment_id: Uuid(),
  counters: Type.Record(Type.String(), Type.Integer()),
  total: Type.Integer(),
});

export const BulkView = Type.Object({
  results: Type.Array(Type.Object({ experiment_id: Uuid(), counter: Type.String(), value: Type.Integer() })),
});
