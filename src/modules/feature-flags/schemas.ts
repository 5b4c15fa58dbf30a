import { Type, type Static } from 'typebox';
import { FLAG_STATUSES } from './domain.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';
import { MAX_VARIATION_RULES, MAX_VARIATIONS, MIN_VARIATIONS, VALUE_TYPES } from '../../targeting/index.js';

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

const VariationKey = Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_.:-]+$', description: 'A variation key (the flag-key pattern)' });

const Variation = Type.Object(
  {
    key: VariationKey,
    value: Type.Unknown({ description: "A value of the flag's value_type: a string, a finite number, or (json) an object or array of at most 32 KiB" }),
    name: Type.Optional(Type.String({ maxLength: 255 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

const Split = Type.Array(
  Type.Object({ variation: VariationKey, weight: Type.Integer({ minimum: 0, maximum: 100 }) }, { additionalProperties: false }),
  { minItems: 1, maxItems: MAX_VARIATIONS, description: 'Sticky per user; integer weights summing to 100' },
);

const VariationRuleInput = Type.Object(
  {
    targeting_rules: TargetingRulesInput,
    variation: Type.Optional(VariationKey),
    split: Type.Optional(Split),
  },
  { additionalProperties: false, description: 'Serves its variation, or a pick of its split, to users its targeting rules match; either variation or split' },
);

/** The typed-flag fields of create (update takes them too; value_type only unchanged). */
const typedFields = {
  value_type: Type.Optional(StringEnum(VALUE_TYPES, { description: 'boolean (default), string, number or json; fixed at creation' })),
  variations: Type.Optional(Type.Array(Variation, { minItems: MIN_VARIATIONS, maxItems: MAX_VARIATIONS, description: 'Non-boolean flags only: 2 to 50, keys unique' })),
  default_variation: Type.Optional(VariationKey),
  off_variation: Type.Optional(VariationKey),
  variation_rules: Type.Optional(Type.Array(VariationRuleInput, { maxItems: MAX_VARIATION_RULES, description: 'First match wins' })),
  variation_split: Type.Optional(Split),
};

const TYPED_EXAMPLE = {
  key: 'checkout-button-copy',
  name: 'Checkout button copy',
  is_active: true,
  rollout_percentage: 100,
  value_type: 'string',
  variations: [
    { key: 'buy', value: 'Buy now' },
    { key: 'order', value: 'Place order' },
    { key: 'classic', value: 'Checkout', name: 'Current copy' },
  ],
  off_variation: 'classic',
  variation_rules: [
    { targeting_rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'DE' }] }] }, variation: 'order' },
  ],
  variation_split: [{ variation: 'buy', weight: 50 }, { variation: 'classic', weight: 50 }],
};

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
    ...typedFields,
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
    TYPED_EXAMPLE,
  ] },
);
export type FlagCreate = Static<typeof FlagCreate>;

/**
 * Every field optional; an omitted field (targeting_rules included) keeps its stored value. Of the typed fields,
 * default_variation and variation_split replace each other, and off_variation alone may be null (served none).
 */
export const FlagUpdate = Type.Partial(
  Type.Object({ ...FlagCreate.properties, off_variation: Nullable(VariationKey) }),
  { additionalProperties: false, examples: [
    { rollout_percentage: 50, is_active: true },
    { variation_split: [{ variation: 'buy', weight: 20 }, { variation: 'classic', weight: 80 }], off_variation: null },
  ] },
);
export type FlagUpdate = Static<typeof FlagUpdate>;

const VariationRulesView = Nullable(Type.Array(Type.Object({
  targeting_rules: Type.Object({}, { additionalProperties: true }),
  variation: Type.Optional(Type.String()),
  split: Type.Optional(Split),
})));

/** A flag's serving state in one environment (the flag view's `environments`). */
export const FlagEnvironmentState = Type.Object({
  is_active: Type.Boolean(),
  status: StringEnum(FLAG_STATUS_VIEWS),
  rollout_percentage: Type.Integer(),
  targeting_rules: Nullable(Type.Object({}, { additionalProperties: true, description: 'The rules as sent' })),
  default_variation: Type.Optional(Nullable(Type.String())),
  off_variation: Type.Optional(Nullable(Type.String())),
  variation_rules: Type.Optional(VariationRulesView),
  variation_split: Type.Optional(Nullable(Split)),
  updated_at: DateTime(),
});
export type FlagEnvironmentState = Static<typeof FlagEnvironmentState>;

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
  value_type: Type.Optional(StringEnum(VALUE_TYPES, { description: 'Typed flags only: a boolean flag (the default) shows none of the typed fields' })),
  variations: Type.Optional(Type.Array(Variation)),
  default_variation: Type.Optional(Nullable(Type.String())),
  off_variation: Type.Optional(Nullable(Type.String())),
  variation_rules: Type.Optional(VariationRulesView),
  variation_split: Type.Optional(Nullable(Split)),
  owner_id: Nullable(Uuid()),
  created_at: DateTime(),
  updated_at: DateTime(),
  environments: Type.Optional(Type.Record(Type.String(), FlagEnvironmentState, {
    description: "The flag's state in every environment, by environment key (the fields above are the environment the request acts on); present once there is more than one environment",
  })),
});
export type FlagView = Static<typeof FlagView>;

export const FlagParams = Type.Object({ flag_id: Uuid() });

const EnvironmentParam = Type.String({
  minLength: 1, maxLength: 64, pattern: '^[a-z0-9_-]{1,64}$',
  description: 'The environment to act on (absent: the default environment); unknown is 404',
});
/** A bearer-token flag route may act on another environment than the default. */
export const EnvironmentQuery = Type.Object({ environment: Type.Optional(EnvironmentParam) });
export type EnvironmentQuery = Static<typeof EnvironmentQuery>;

export const CopyStateParams = Type.Object({ flag_id: Uuid(), target: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9_-]{1,64}$' }) });
export const CopyStateBody = Type.Object(
  { from: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9_-]{1,64}$', description: 'The environment whose state is copied' }) },
  { additionalProperties: false, examples: [{ from: 'staging' }] },
);

export const FlagListQuery = Type.Object({
  status: Type.Optional(StringEnum(FLAG_STATUSES)),
  search: Type.Optional(Type.String({ maxLength: 255, description: 'Part of the name or key, any letter case' })),
  skip: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, default: 100, description: 'No maximum' }),
  environment: Type.Optional(EnvironmentParam),
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
  variation: Type.Optional(Type.String({ description: 'Typed flags: the variation served (absent when the flag is off for the user and has no off_variation)' })),
  value: Type.Optional(Type.Unknown({ description: "Typed flags: the served variation's value" })),
  variation_reason: Type.Optional(StringEnum(['off', 'rule', 'rule_split', 'split', 'default'], {
    description: 'Typed flags: how the variation was chosen: off (off_variation or none), a variation rule (its variation or its split), variation_split, default_variation',
  })),
});
export type Evaluation = Static<typeof Evaluation>;

export const UserFlagsParams = Type.Object({ user_id: UserId });
export const UserFlagsQuery = Type.Object({
  context: Type.Optional(ContextParam),
  details: Type.Optional(Type.Boolean({ description: 'true: each flag answers {enabled, variation?, value?} (typed flags: the variation served) instead of a boolean' })),
});
export const UserFlagDetails = Type.Object({
  enabled: Type.Boolean(),
  variation: Type.Optional(Type.String()),
  value: Type.Optional(Type.Unknown()),
});
export type UserFlagDetails = Static<typeof UserFlagDetails>;
export const UserFlags = Type.Union([
  Type.Record(Type.String(), Type.Boolean(), { description: 'Every flag that is not archived: key to whether it is on for this user' }),
  Type.Record(Type.String(), UserFlagDetails, { description: 'With details=true: key to whether it is on and, for typed flags, the variation served and its value' }),
]);
