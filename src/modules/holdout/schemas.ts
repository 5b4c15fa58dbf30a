import { Type, type Static } from 'typebox';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

const Percentage = Type.Number({ minimum: 0, maximum: 100, description: 'Share of all users kept out of every experiment' });

export const HoldoutCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
    percentage: Percentage,
    is_active: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false, examples: [
    {
      name: 'Global holdout 2027',
      description: 'Users kept out of every experiment to measure their combined effect',
      percentage: 5,
      is_active: true,
    },
  ] },
);
export type HoldoutCreate = Static<typeof HoldoutCreate>;

export const HoldoutUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
    percentage: Type.Optional(Percentage),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, examples: [{ percentage: 2.5 }] },
);
export type HoldoutUpdate = Static<typeof HoldoutUpdate>;

export const HoldoutView = Type.Object({
  id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  percentage: Type.Number(),
  is_active: Type.Boolean(),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export type HoldoutView = Static<typeof HoldoutView>;

export const HoldoutCheck = Type.Object({
  user_id: Type.String(),
  in_holdout: Type.Boolean(),
  holdout_id: Nullable(Uuid()),
  percentage: Nullable(Type.Number()),
});

export const HoldoutResults = Type.Object({
  holdout: HoldoutView,
  analysis_status: StringEnum(['ga', 'beta']),
  analysis_notice: Type.String(),
  users_in_holdout: Type.Integer(),
  users_in_experiments: Type.Integer(),
  metrics: Type.Array(
    Type.Object({
      event_name: Type.String(),
      holdout_users: Type.Integer(),
      holdout_converters: Type.Integer({ description: 'Held-out users who sent the event' }),
      holdout_rate: Nullable(Type.Number()),
      exposed_users: Type.Integer(),
      exposed_converters: Type.Integer(),
      exposed_rate: Nullable(Type.Number()),
      relative_lift: Nullable(Type.Number({ description: 'Exposed rate relative to the held-out rate' })),
      p_value: Nullable(Type.Number({ description: "Fisher's exact test, two-sided" })),
    }),
  ),
});

export const HoldoutParams = Type.Object({ holdout_id: Uuid() });
export const HoldoutUserParams = Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 255 }) });
