import { Type, type Static } from 'typebox';
import { FLAG_STATUSES } from './domain.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

export const FLAG_STATUS_VIEWS = ['active', 'inactive', 'archived'] as const;
export const BULK_ACTIONS = ['enable', 'disable', 'archive'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];
export const FLAG_REASONS = ['disabled', 'targeting_match', 'targeting_miss', 'rollout', 'error', 'not_found'] as const;
export const MAX_BULK_FLAGS = 1000;

const RULES_EXAMPLE = {
  logical_operator: 'AND',
  groups: [
    {
      logical_operator: 'AND',
      conditions: [
        { attribute: 'country', operator: 'in', value: ['US', 'CA'] },
        { attribute: 'app_version', operator: 'semver_gte', value: '2.0.0' },
      ],
    },
  ],
};

/**
 * Any object: the rule format is checked by the targeting validator, so every problem is one fixed sentence at
 * body.targeting_rules (spec, "Feature flag") rather than a schema error deep inside the rules.
 */
const TargetingRulesInput = Type.Object(
  {},
  {
    additionalProperties: true,
    description: 'logical_operator (AND, OR), optional negate, groups of conditions (attribute, operator, value, negate); an empty groups list means no targeting',
    example: RULES_EXAMPLE,
  },
);

/** Letters, digits and `_ - . :` only: keys travel in URLs (evaluate/{flag_key}) and SDK code. */
const FlagKey = Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_.:-]+$' });

/** Unknown fields and explicit nulls are refused (spec, "Feature flag"). */
export const FlagCreate = Type.Object(
  {
    key: FlagKey,
    name: Type.String({ minLength: 1, maxLength: 255 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    is_active: Type.Optional(Type.Boolean({ description: 'A new flag is off unless true is sent' })),
    rollout_percentage: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 100, description: 'Share of users (by stable hash) who get the flag; default 0' }),
    ),
    targeting_rules: Type.Optional(TargetingRulesInput),
    default_value: Type.Optional(Type.Literal(false, { description: 'Only false is accepted' })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
  },
  { additionalProperties: false, examples: [
    {
      key: 'new-checkout',
      name: 'New checkout',
      description: 'One-page checkout',
      is_active: false,
      rollout_percentage: 10,
      tags: ['checkout'],
      targeting_rules: {
        logical_operator: 'AND',
        groups: [
          { logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'in', value: ['US', 'CA'] }] },
        ],
      },
    },
  ] },
);
export type FlagCreate = Static<typeof FlagCreate>;

/** Every field optional; an omitted field (targeting_rules included) keeps its stored value. */
export const FlagUpdate = Type.Partial(FlagCreate, { additionalProperties: false, examples: [
  { rollout_percentage: 50, is_active: true },
] });
export type FlagUpdate = Static<typeof FlagUpdate>;

export const FlagView = Type.Object({
  id: Uuid(),
  key: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  status: StringEnum(FLAG_STATUS_VIEWS),
  is_active: Type.Boolean(),
  rollout_percentage: Type.Integer(),
  targeting_rules: Nullable(Type.Object({}, { additionalProperties: true, description: 'The rules as sent' })),
  default_value: Type.Boolean(),
  tags: Nullable(Type.Array(Type.String())),
  owner_id: Nullable(Uuid()),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export type FlagView = Static<typeof FlagView>;

export const FlagParams = Type.Object({ flag_id: Uuid() });

export const FlagListQuery = Type.Object({
  status: Type.Optional(StringEnum(FLAG_STATUSES)),
  search: Type.Optional(Type.String({ maxLength: 255, description: 'Part of the name or key, any letter case' })),
  skip: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, default: 100, description: 'No maximum' }),
});
export type FlagListQuery = Static<typeof FlagListQuery>;

export const FlagList = Type.Object({
  items: Type.Array(FlagView),
  total: Type.Integer({ description: 'Every match, not the page size' }),
  skip: Type.Integer(),
  limit: Type.Integer(),
});

export const BulkToggleBody = Type.Object(
  {
    ids: Type.Array(Uuid(), { minItems: 1, maxItems: MAX_BULK_FLAGS, uniqueItems: true }),
    action: StringEnum(BULK_ACTIONS),
  },
  { additionalProperties: false, examples: [
    { ids: ['c2d4e6f8-1a3b-4c5d-8e7f-9a0b1c2d3e4f', '0e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b'], action: 'disable' },
  ] },
);

export const BulkToggleResult = Type.Object({
  results: Type.Array(
    Type.Object({ id: Uuid(), success: Type.Boolean(), error: Nullable(Type.String()) }),
    { description: 'One entry per id, in request order' },
  ),
});
export type BulkToggleResult = Static<typeof BulkToggleResult>;

export const HistoryQuery = Type.Object({
  skip: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
});

export const HistoryEntry = Type.Object({
  id: Uuid(),
  action: Type.String(),
  actor_id: Nullable(Uuid()),
  actor_username: Nullable(Type.String()),
  before: Nullable(Type.Object({}, { additionalProperties: true })),
  after: Nullable(Type.Object({}, { additionalProperties: true })),
  details: Nullable(Type.Object({}, { additionalProperties: true })),
  created_at: DateTime(),
});
export type HistoryEntry = Static<typeof HistoryEntry>;

const UserId = Type.String({ minLength: 1, maxLength: 255 });
const Context = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'User attributes (nested objects or dotted keys)' });
const ContextParam = Type.String({ description: 'URL-encoded JSON object, at most 8192 bytes as sent' });

export const EvaluateParams = Type.Object({ flag_key: Type.String({ minLength: 1, maxLength: 255 }) });
export const EvaluateQuery = Type.Object({ user_id: UserId, context: Type.Optional(ContextParam) });
export const EvaluateBody = Type.Object(
  { user_id: UserId, context: Type.Optional(Nullable(Context)) },
  { additionalProperties: false, examples: [
    { user_id: 'user-123', context: { country: 'US', plan: 'pro', app_version: '2.3.1' } },
  ] },
);
export const Evaluation = Type.Object({
  flag_key: Type.String(),
  enabled: Type.Boolean(),
  reason: StringEnum(FLAG_REASONS),
  rule: Type.Optional(Type.String({ description: 'The satisfied conditions, when targeting rules matched' })),
});
export type Evaluation = Static<typeof Evaluation>;

export const UserFlagsParams = Type.Object({ user_id: UserId });
export const UserFlagsQuery = Type.Object({ context: Type.Optional(ContextParam) });
export const UserFlags = Type.Record(Type.String(), Type.Boolean(), {
  description: 'Every flag that is not archived: key to whether it is on for this user',
});
