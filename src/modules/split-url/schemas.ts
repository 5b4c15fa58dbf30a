import { Type, type Static } from 'typebox';
import { Uuid } from '../../platform/schemas.js';

export const PreviewParams = Type.Object({ experiment_id: Uuid() });
export const PreviewQuery = Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 255 }) });

export const SplitUrlPreview = Type.Object({
  experiment_id: Uuid(),
  user_id: Type.String(),
  variant_name: Type.String(),
  url: Type.String(),
  traffic_allocation: Type.Number(),
});
export type SplitUrlPreview = Static<typeof SplitUrlPreview>;
