import { Type, type Static } from 'typebox';
import { DateTime, JsonObject, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

export const ASSIGNMENT_REASONS = ['assigned', 'holdout', 'mutual_exclusion', 'targeting'] as const;
export type AssignmentReason = (typeof ASSIGNMENT_REASONS)[number];

const UserId = Type.String({ minLength: 1, maxLength: 255 });
const Key = Type.String({ minLength: 1, maxLength: 255 });
const Context = JsonObject({ description: 'Targeting context: at most 10 levels deep and 8192 bytes' });
const Metadata = JsonObject();

export const AssignBody = Type.Object(
  { experiment_key: Key, user_id: UserId, context: Type.Optional(Context) },
  { additionalProperties: false, examples: [
    { experiment_key: 'checkout-button-colour', user_id: 'user-123', context: { country: 'US', plan: 'pro' } },
  ] },
);
export type AssignBody = Static<typeof AssignBody>;

export const AssignmentView = Type.Object({
  experiment_key: Type.String(),
  user_id: Type.String(),
  variant_id: Uuid(),
  variant_name: Type.String(),
  is_control: Type.Boolean(),
  configuration: Nullable(JsonObject()),
  assigned: Type.Boolean(),
  reason: StringEnum(ASSIGNMENT_REASONS),
});
export type AssignmentView = Static<typeof AssignmentView>;

export const BatchAssignBody = Type.Object(
  {
    experiment_key: Key,
    users: Type.Array(Type.Object({ user_id: UserId, context: Type.Optional(Context) }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: 1000,
    }),
  },
  { additionalProperties: false, examples: [
    {
      experiment_key: 'checkout-button-colour',
      users: [{ user_id: 'user-123', context: { country: 'US' } }, { user_id: 'user-456' }],
    },
  ] },
);
export type BatchAssignBody = Static<typeof BatchAssignBody>;

export const BatchAssignView = Type.Object({
  experiment_key: Type.String(),
  variants: Type.Record(Type.String(), Type.Object({ name: Type.String(), is_control: Type.Boolean(), configuration: Nullable(JsonObject()) })),
  assignments: Type.Array(Type.Object({ user_id: Type.String(), variant_id: Uuid(), assigned: Type.Boolean(), reason: StringEnum(ASSIGNMENT_REASONS) })),
  counts: Type.Object({ assigned: Type.Integer(), holdout: Type.Integer(), mutual_exclusion: Type.Integer(), targeting: Type.Integer() }),
});

const EventFields = {
  event_type: Type.String({ minLength: 1, maxLength: 255, description: 'Returned as event_name' }),
  user_id: Type.Optional(UserId),
  experiment_key: Type.Optional(Key),
  feature_flag_key: Type.Optional(Key),
  value: Type.Optional(Nullable(Type.Number())),
  metadata: Type.Optional(Nullable(Metadata)),
};
export const TrackBody = Type.Object(EventFields, { additionalProperties: false, examples: [
  {
    event_type: 'purchase',
    user_id: 'user-123',
    experiment_key: 'checkout-button-colour',
    value: 49.9,
    metadata: { currency: 'USD', items: 2 },
  },
] });
export type TrackBody = Static<typeof TrackBody>;

export const EventView = Type.Object({
  id: Uuid(),
  event_name: Type.String(),
  user_id: Nullable(Type.String()),
  value: Nullable(Type.Number()),
  experiment_key: Nullable(Type.String()),
  feature_flag_key: Nullable(Type.String()),
  variant_id: Nullable(Uuid()),
  metadata: Nullable(JsonObject()),
  created_at: DateTime(),
});
export type EventView = Static<typeof EventView>;

export const BatchTrackBody = Type.Object(
  { events: Type.Array(TrackBody, { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false, examples: [
    {
      events: [
        { event_type: 'add_to_cart', user_id: 'user-123', experiment_key: 'checkout-button-colour' },
        {
          event_type: 'purchase',
          user_id: 'user-123',
          experiment_key: 'checkout-button-colour',
          value: 49.9,
          metadata: { currency: 'USD' },
        },
      ],
    },
  ] },
);
export type BatchTrackBody = Static<typeof BatchTrackBody>;

export const BatchTrackView = Type.Object({
  received: Type.Integer(),
  stored: Type.Integer(),
  failed: Type.Integer(),
  results: Type.Array(Type.Object({ index: Type.Integer(), success: Type.Boolean(), id: Type.Optional(Uuid()), error: Type.Optional(Type.String()) })),
  errors: Type.Array(Type.Object({ index: Type.Integer(), error: Type.String() })),
});

export const TrackByIdsBody = Type.Object(
  {
    event_type: EventFields.event_type,
    user_id: Type.Optional(UserId),
    experiment_id: Type.Optional(Uuid()),
    feature_flag_id: Type.Optional(Uuid()),
    variant_id: Type.Optional(Uuid()),
    value: EventFields.value,
    metadata: EventFields.metadata,
  },
  { additionalProperties: false, examples: [
    {
      event_type: 'purchase',
      user_id: 'user-123',
      experiment_id: '3f6c2a8e-5b1d-4c7e-9a2f-1d8b6e4c0a71',
      variant_id: 'a1b3c5d7-e9f1-4a3b-8c5d-7e9f1a3b5c7d',
      value: 49.9,
    },
  ] },
);
export type TrackByIdsBody = Static<typeof TrackByIdsBody>;

export const EventByIdsView = Type.Object({
  id: Uuid(),
  event_name: Type.String(),
  user_id: Nullable(Type.String()),
  value: Nullable(Type.Number()),
  experiment_id: Nullable(Uuid()),
  feature_flag_id: Nullable(Uuid()),
  variant_id: Nullable(Uuid()),
  metadata: Nullable(JsonObject()),
  created_at: DateTime(),
});

export const UserAssignmentsView = Type.Array(
  Type.Object({
    experiment_id: Uuid(),
    experiment_key: Type.String(),
    experiment_name: Type.String(),
    variant_id: Uuid(),
    variant_name: Type.String(),
    is_control: Type.Boolean(),
    assigned_at: DateTime(),
  }),
);
export const UserIdParams = Type.Object({ user_id: UserId });

export const PeekQuery = Type.Object({ experiment_key: Key, user_id: UserId });
export type PeekQuery = Static<typeof PeekQuery>;

export const PeekView = Type.Object({
  experiment_key: Type.String(),
  experiment_status: Type.String(),
  user_id: Type.String(),
  assigned: Type.Boolean({ description: 'false: the user is not enrolled (nothing was recorded by this read)' }),
  variant_id: Nullable(Uuid()),
  variant_name: Nullable(Type.String()),
  is_control: Nullable(Type.Boolean()),
  configuration: Nullable(JsonObject()),
  assigned_at: Nullable(DateTime()),
});
export type PeekView = Static<typeof PeekView>;
