import { Type, type Static } from 'typebox';
import { DateTime, StringEnum, Uuid } from '../../platform/schemas.js';

import { ENGINE_VERSION } from '../../analysis/domain.js';

export { ENGINE_VERSION };

export const BanditParams = Type.Object({ experiment_id: Uuid() });

export const BanditView = Type.Object({
  experiment_id: Uuid(),
  weights: Type.Record(Type.String(), Type.Number(), { description: 'Share of new users per variant id; sums to 1' }),
  source: StringEnum(['initial', 'thompson', 'manual'] as const),
  arms: Type.Array(
    Type.Object({
      variant_id: Uuid(),
      variant_name: Type.String(),
      is_control: Type.Boolean(),
      pulls: Type.Integer({ description: 'Assigned users' }),
      conversions: Type.Integer({ description: 'Users converting on the primary metric' }),
      weight: Type.Number(),
    }),
  ),
  exploration_floor: Type.Number(),
  engine_version: Type.String({ default: ENGINE_VERSION }),
  updated_at: DateTime(),
});
export type BanditView = Static<typeof BanditView>;

export const WeightsBody = Type.Object(
  { weights: Type.Record(Type.String({ format: 'uuid' }), Type.Number({ minimum: 0, maximum: 1 }), { description: 'Variant id to weight; must cover every variant and sum to 1' }) },
  { additionalProperties: false, examples: [
    { weights: { '9b2c4d6e-8f0a-4b1c-9d3e-5f7a9b1c3d5e': 0.3, 'a1b3c5d7-e9f1-4a3b-8c5d-7e9f1a3b5c7d': 0.7 } },
  ] },
);
export type WeightsBody = Static<typeof WeightsBody>;
