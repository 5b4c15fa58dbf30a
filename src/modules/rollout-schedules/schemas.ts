import { Type, type Static } from 'typebox';
import { ROLLOUT_SCHEDULE_STATUSES } from '../../db/schema/rollout-schedules.js';
import { DateTime, Nullable, Pagination, StringEnum, Uuid } from '../../platform/schemas.js';

/** Enough for any staged rollout; bounds the work of one schedule. */
export const MAX_STAGES = 50;

const Percentage = Type.Integer({ minimum: 0, maximum: 100, description: 'Rollout percentage the stage sets on the flag' });
const ScheduledAt = Nullable(DateTime({ description: 'When the scheduler applies the stage; null (or left out) waits for a manual advance' }));
const Name = Type.String({ minLength: 1, maxLength: 255 });
const Description = Nullable(Type.String({ maxLength: 2000 }));

export const StageInput = Type.Object(
  { percentage: Percentage, scheduled_at: Type.Optional(ScheduledAt) },
  { additionalProperties: false, examples: [{ percentage: 75, scheduled_at: '2027-02-12T09:00:00Z' }] },
);
export type StageInput = Static<typeof StageInput>;

export const StageUpdate = Type.Object(
  { percentage: Type.Optional(Percentage), scheduled_at: Type.Optional(ScheduledAt) },
  { additionalProperties: false, examples: [
    { percentage: 30, scheduled_at: '2027-02-08T09:00:00Z' },
    { scheduled_at: null },
  ] },
);
export type StageUpdate = Static<typeof StageUpdate>;

export const ScheduleCreate = Type.Object(
  {
    flag_id: Uuid(),
    name: Name,
    description: Type.Optional(Description),
    stages: Type.Optional(Type.Array(StageInput, { maxItems: MAX_STAGES, description: 'In the order they run' })),
  },
  { additionalProperties: false, examples: [
    {
      flag_id: 'c2d4e6f8-1a3b-4c5d-8e7f-9a0b1c2d3e4f',
      name: 'New checkout rollout',
      description: 'Ramp up over two weeks',
      stages: [
        { percentage: 10, scheduled_at: '2027-02-01T09:00:00Z' },
        { percentage: 25, scheduled_at: '2027-02-04T09:00:00Z' },
        { percentage: 50, scheduled_at: '2027-02-08T09:00:00Z' },
        { percentage: 100, scheduled_at: null },
      ],
    },
  ] },
);
export type ScheduleCreate = Static<typeof ScheduleCreate>;

export const ScheduleUpdate = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description) },
  { additionalProperties: false, examples: [
    { name: 'New checkout rollout (EU first)', description: 'Ramp up over three weeks' },
  ] },
);
export type ScheduleUpdate = Static<typeof ScheduleUpdate>;

export const StageView = Type.Object({
  id: Uuid(),
  position: Type.Integer({ description: '1 for the stage that runs first' }),
  percentage: Type.Integer(),
  scheduled_at: Nullable(DateTime()),
  status: StringEnum(['pending', 'applied'] as const),
  applied_at: Nullable(DateTime()),
});
export type StageView = Static<typeof StageView>;

export const ScheduleView = Type.Object({
  id: Uuid(),
  flag_id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  status: StringEnum(ROLLOUT_SCHEDULE_STATUSES),
  owner_id: Nullable(Uuid({ description: 'null once the creator account is deleted' })),
  stages: Type.Array(StageView),
  created_at: DateTime(),
  updated_at: DateTime(),
});
export type ScheduleView = Static<typeof ScheduleView>;

export const ScheduleListQuery = Type.Object({
  ...Pagination({ limit: 100, max: 500 }).properties,
  flag_id: Type.Optional(Uuid()),
  status: Type.Optional(StringEnum(ROLLOUT_SCHEDULE_STATUSES)),
});
export type ScheduleListQuery = Static<typeof ScheduleListQuery>;

export const ScheduleList = Type.Object({
  items: Type.Array(ScheduleView),
  total: Type.Integer({ description: 'All matches, not the page size' }),
  skip: Type.Integer(),
  limit: Type.Integer(),
});

export const ScheduleParams = Type.Object({ schedule_id: Uuid() });
export const StageParams = Type.Object({ stage_id: Uuid() });
