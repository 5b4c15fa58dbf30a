import { Type, type Static } from 'typebox';
import { DateTime, Uuid } from '../../platform/schemas.js';

export const WorkspaceView = Type.Object({
  id: Uuid(),
  name: Type.String(),
  slug: Type.String(),
  is_default: Type.Boolean(),
  member_count: Type.Integer({ minimum: 0 }),
  created_at: DateTime(),
});
export type WorkspaceView = Static<typeof WorkspaceView>;
