import { Type } from 'typebox';

const Metadata = Type.Record(Type.String(), Type.Union([Type.Boolean(), Type.String(), Type.Number()]), {
  description: 'upliftReason: the Uplift reason (disabled, targeting_match, targeting_miss, rollout); rule: the satisfied conditions (single evaluation only)',
});

export const OfrepRequest = Type.Object(
  {
    context: Type.Optional(
      Type.Object(
        { targetingKey: Type.Optional(Type.String({ description: 'The user id (bucketing and id-list segments)' })) },
        {
          additionalProperties: true,
          description: 'The evaluation context: targetingKey plus the attributes the targeting rules read (at most 10 levels and 8,192 bytes besides targetingKey)',
        },
      ),
    ),
  },
  { additionalProperties: true, examples: [{ context: { targetingKey: 'user-123', country: 'CA', plan: 'premium' } }] },
);

export const OfrepSuccess = Type.Object({
  key: Type.String(),
  value: Type.Optional(Type.Unknown({ description: 'The flag value; absent: use the code default (OFREP ADR 0006)' })),
  variant: Type.Optional(Type.String({ description: 'on or off for boolean flags' })),
  reason: Type.String({ description: 'STATIC, TARGETING_MATCH, SPLIT, DISABLED or DEFAULT (docs/api-notes.md)' }),
  metadata: Type.Optional(Metadata),
});

export const OfrepFailure = Type.Object({
  key: Type.Optional(Type.String({ description: 'Absent when the whole bulk request failed' })),
  errorCode: Type.String({ description: 'PARSE_ERROR, INVALID_CONTEXT, TARGETING_KEY_MISSING, GENERAL or FLAG_NOT_FOUND' }),
  errorDetails: Type.Optional(Type.String()),
});

export const OfrepFlagParams = Type.Object({ key: Type.String({ description: 'The flag key' }) });

export const OfrepBulkHeaders = Type.Object({
  'if-none-match': Type.Optional(Type.String({ description: 'The ETag of an earlier bulk answer for the same context: 304 while it is current' })),
});

export const OfrepBulkQuery = Type.Object({
  flagConfigEtag: Type.Optional(Type.String({ description: 'Sent by providers on a re-fetch an event asked for (ADR 0008); accepted and not needed' })),
  flagConfigLastModified: Type.Optional(Type.String({ description: 'As flagConfigEtag' })),
});

export const OfrepBulkAnswer = Type.Object({
  flags: Type.Array(Type.Union([OfrepSuccess, OfrepFailure]), { description: 'Every flag that is not archived, ordered by key' }),
  eventStreams: Type.Array(
    Type.Object({
      type: Type.Literal('sse'),
      endpoint: Type.Object({ requestUri: Type.String({ description: 'Path and signed token of the event stream, on the OFREP base URL origin' }) }),
    }),
  ),
});

export const OfrepStreamQuery = Type.Object({
  token: Type.String({ maxLength: 2048, description: 'The signed token from the bulk answer (valid 5 to 10 minutes; a connection outlives it)' }),
});

export const OfrepStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(Type.String({ maxLength: 128, description: 'The version the client last heard: a refetchEvaluation is sent at once when it is not current' })),
});
