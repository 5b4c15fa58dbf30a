import { Type, type Static } from 'typebox';
import { DateTime, JsonObject, Nullable, Uuid } from '../../platform/schemas.js';

const NullableJsonObject = Nullable(JsonObject());

export const AuditLogView = Type.Object({
  id: Uuid(),
  sequence: Nullable(Type.Integer({ description: 'Position in the signed chain and the stream event id; null until sealed' })),
  actor_id: Nullable(Uuid()),
  actor_username: Nullable(Type.String()),
  action: Type.String(),
  entity_type: Type.String(),
  entity_id: Nullable(Type.String()),
  before: NullableJsonObject,
  after: NullableJsonObject,
  details: NullableJsonObject,
  created_at: DateTime(),
});
export type AuditLogView = Static<typeof AuditLogView>;

export const AuditLogPage = Type.Object({
  items: Type.Array(AuditLogView),
  total: Type.Integer({ description: 'All matching entries, not the page size' }),
  skip: Type.Integer(),
  limit: Type.Integer(),
});
export type AuditLogPage = Static<typeof AuditLogPage>;

const Paging = {
  skip: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
};
const Name = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });

export const AuditLogListQuery = Type.Object({
  ...Paging,
  action: Type.Optional(Name('Only entries with this action, e.g. feature_flag_update')),
  entity_type: Type.Optional(Name('Only entries about this kind of entity')),
  entity_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  actor_id: Type.Optional(Uuid({ description: 'Only entries written by this account (DEVELOPER and VIEWER: only their own id)' })),
  start_time: Type.Optional(DateTime()),
  end_time: Type.Optional(DateTime()),
});
export type AuditLogListQuery = Static<typeof AuditLogListQuery>;

export const PageQuery = Type.Object(Paging);

export const EntityParams = Type.Object({
  entity_type: Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z][a-z0-9_]*$', description: 'Entity type, e.g. feature_flag' }),
  entity_id: Type.String({ minLength: 1, maxLength: 255 }),
});
export const UserParams = Type.Object({ user_id: Uuid() });

export const StatsQuery = Type.Object({
  days: Type.Integer({ minimum: 1, maximum: 3650, default: 30, description: 'Period ending now' }),
});

const Count = Type.Integer({ minimum: 0 });
export const AuditStats = Type.Object({
  period_start: DateTime(),
  period_end: DateTime(),
  total_entries: Count,
  by_action: Type.Array(Type.Object({ action: Type.String(), count: Count })),
  by_entity_type: Type.Array(Type.Object({ entity_type: Type.String(), count: Count })),
  top_actors: Type.Array(Type.Object({ actor_id: Nullable(Uuid()), actor_username: Nullable(Type.String()), count: Count })),
  per_day: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), count: Count })),
});
export type AuditStats = Static<typeof AuditStats>;

export const StreamQuery = Type.Object({
  action: Type.Optional(Name('Only entries with this action')),
  entity_type: Type.Optional(Name('Only entries about this kind of entity')),
});
export const StreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({ pattern: '^[0-9]{1,15}$', description: 'Resume after this event id (sent by EventSource on reconnect)' }),
  ),
});
