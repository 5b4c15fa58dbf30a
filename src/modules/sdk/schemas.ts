import { Type } from 'typebox';
import { Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

export const SdkRuleset = Type.Object({
  bucketing: Type.Object(
    { name: Type.String(), version: Type.Integer() },
    { description: 'The bucketing function (see the targeting README); a new version is a new mapping' },
  ),
  split_bucketing: Type.Object(
    { name: Type.String(), version: Type.Integer() },
    { description: "The hash of typed flags' variation splits (its own version, see the targeting README)" },
  ),
  flags: Type.Array(
    Type.Object({
      id: Uuid(),
      key: Type.String(),
      status: StringEnum(['active', 'inactive', 'archived']),
      is_active: Type.Boolean(),
      rollout_percentage: Type.Integer(),
      targeting_rules: Nullable(Type.Object({}, { additionalProperties: true })),
      default_value: Type.Boolean(),
      value_type: Type.Optional(StringEnum(['string', 'number', 'json'], { description: 'Typed flags only (a boolean flag has none of the typed fields)' })),
      variations: Type.Optional(Type.Array(Type.Object({ key: Type.String(), value: Type.Unknown(), name: Type.Optional(Type.String()), description: Type.Optional(Type.String()) }))),
      default_variation: Type.Optional(Nullable(Type.String())),
      off_variation: Type.Optional(Nullable(Type.String())),
      variation_rules: Type.Optional(Nullable(Type.Array(Type.Object({}, { additionalProperties: true })))),
      variation_split: Type.Optional(Nullable(Type.Array(Type.Object({ variation: Type.String(), weight: Type.Integer() })))),
    }),
    { description: 'Every flag, ordered by key' },
  ),
  segments: Type.Array(
    Type.Object({
      id: Uuid(),
      kind: StringEnum(['rules', 'id_list']),
      status: StringEnum(['active', 'inactive', 'archived']),
      rules: Type.Unknown({ description: 'null for id_list segments' }),
      valid: Type.Boolean({ description: 'false: rules in an old format; flags naming it evaluate to enabled false, reason error' }),
    }),
    {
      description:
        'The segments the flags name. id_list members are not included (up to 1,000,000 per segment): evaluate flags naming one through /feature-flags/evaluate',
    },
  ),
});

export const SdkStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({ maxLength: 128, description: 'The version the client holds (sent by EventSource on reconnect): no ruleset is resent when it is current' }),
  ),
});
