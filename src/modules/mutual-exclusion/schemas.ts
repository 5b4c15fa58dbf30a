import { Type, type Static } from 'typebox';
import { EXPERIMENT_STATUSES } from '../experiments/domain.js';
import { MUTEX_GROUP_STATUSES } from '../../db/schema/mutual-exclusion.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** Percentage of the group's users per member experiment id; the shares add up to at most 100. */
export const TrafficAllocation = Type.Record(Type.String({ pattern: UUID_PATTERN }), Type.Number({ minimum: 0, maximum: 100 }), {
  description: 'Percentage of the group users per member experiment id (total at most 100); null splits evenly',
});

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Description = Nullable(Type.String({ maxLength: 10_000 }));

export const GroupCreate = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    traffic_allocation: Type.Optional(Nullable(TrafficAllocation)),
    experiment_ids: Type.Optional(Type.Array(Uuid(), { maxItems: 100, uniqueItems: true })),
  },
  { additionalProperties: false, examples: [
    {
      name: 'Checkout page tests',
      description: 'Experiments that change the checkout page',
      experiment_ids: ['3f6c2a8e-5b1d-4c7e-9a2f-1d8b6e4c0a71', '7a1e9c4b-2d3f-4e8a-b6c5-0f9d8e7a6b52'],
      traffic_allocation: { '3f6c2a8e-5b1d-4c7e-9a2f-1d8b6e4c0a71': 50, '7a1e9c4b-2d3f-4e8a-b6c5-0f9d8e7a6b52': 50 },
    },
  ] },
);
export type GroupCreate = Static<typeof GroupCreate>;

export const GroupUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    traffic_allocation: Type.Optional(Nullable(TrafficAllocation)),
    status: Type.Optional(StringEnum(MUTEX_GROUP_STATUSES, { description: 'Changing it needs ADMIN' })),
  },
  { additionalProperties: false, examples: [
    {
      name: 'Checkout page tests',
      traffic_allocation: { '3f6c2a8e-5b1d-4c7e-9a2f-1d8b6e4c0a71': 40, '7a1e9c4b-2d3f-4e8a-b6c5-0f9d8e7a6b52': 60 },
    },
  ] },
);
export type GroupUpdate = Static<typeof GroupUpdate>;

export const GroupMemberAdd = Type.Object({ experiment_id: Uuid() }, { additionalProperties: false, examples: [
  { experiment_id: '3f6c2a8e-5b1d-4c7e-9a2f-1d8b6e4c0a71' },
] });

export const GroupView = Type.Object({
  id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  status: StringEnum(MUTEX_GROUP_STATUSES),
  traffic_allocation: Nullable(Type.Record(Type.String(), Type.Number())),
  experiments: Type.Array(
    Type.Object({ id: Uuid(), key: Type.String(), name: Type.String(), status: StringEnum(EXPERIMENT_STATUSES) }),
  ),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export type GroupView = Static<typeof GroupView>;

export const GroupListQuery = Type.Object({ status: Type.Optional(StringEnum(MUTEX_GROUP_STATUSES)) });
export const GroupParams = Type.Object({ group_id: Uuid() });
export const GroupMemberParams = Type.Object({ group_id: Uuid(), experiment_id: Uuid() });
