import { Type, type Static } from 'typebox';
import { SEGMENT_KINDS, SEGMENT_STATUSES } from '../../db/schema/segments.js';
import { DateTime, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

/** Segment limits from the spec ("Limits: Segments"). */
export const MAX_IDS_PER_MEMBER_REQUEST = 10_000;
export const MAX_MEMBER_ID_LENGTH = 255;
export const MAX_SEGMENT_MEMBERS = 1_000_000;
export const MAX_BULK_EVALUATE_SEGMENTS = 50;
export const PREVIEW_SAMPLE = { min: 10, max: 10_000, default: 1_000 } as const;

const RULES_EXAMPLE = {
  logical_operator: 'AND',
  groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'in', value: ['US', 'CA'] }] }],
};

/**
 * Any JSON value: the shape is checked by the targeting validator so that every violation is one fixed message at
 * body.rules (spec, "Segment"), never a schema error naming a nested path.
 */
const RulesInput = Type.Unknown({
  description: 'Targeting rules (logical_operator, groups of conditions); required for `rules` segments, refused for `id_list`',
  example: RULES_EXAMPLE,
});

const UserContext = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description: 'Attributes of the user (nested objects or dotted keys)',
});

export const SegmentParams = Type.Object({ segment_id: Uuid() });

export const SegmentCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    kind: Type.Optional(StringEnum(SEGMENT_KINDS, { default: 'rules' })),
    rules: Type.Optional(RulesInput),
    status: Type.Optional(StringEnum(SEGMENT_STATUSES, { default: 'active' })),
  },
  { additionalProperties: false, examples: [
    {
      name: 'North American users',
      description: 'Users in the US or Canada',
      kind: 'rules',
      rules: {
        logical_operator: 'AND',
        groups: [
          { logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'in', value: ['US', 'CA'] }] },
        ],
      },
    },
    { name: 'Beta testers', description: 'Hand-picked user ids', kind: 'id_list' },
  ] },
);
export type SegmentCreate = Static<typeof SegmentCreate>;

/** `kind` is set on create and never changed: sending it is refused as an unknown field. */
export const SegmentUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    rules: Type.Optional(RulesInput),
    status: Type.Optional(StringEnum(SEGMENT_STATUSES)),
  },
  { additionalProperties: false, examples: [
    {
      description: 'Users in the US, Canada or Mexico',
      rules: {
        logical_operator: 'AND',
        groups: [
          {
            logical_operator: 'AND',
            conditions: [{ attribute: 'country', operator: 'in', value: ['US', 'CA', 'MX'] }],
          },
        ],
      },
    },
  ] },
);
export type SegmentUpdate = Static<typeof SegmentUpdate>;

const segmentFields = {
  id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  kind: StringEnum(SEGMENT_KINDS),
  rules: Type.Unknown({ description: 'The rules exactly as sent; null for id_list segments' }),
  status: StringEnum(SEGMENT_STATUSES),
  owner_id: Nullable(Uuid()),
  created_at: DateTime(),
  updated_at: DateTime(),
};

export const SegmentView = Type.Object(segmentFields);
export type SegmentView = Static<typeof SegmentView>;

/** GET by id adds member_count (null for rules segments). */
export const SegmentDetail = Type.Object({ ...segmentFields, member_count: Nullable(Type.Integer()) });
export type SegmentDetail = Static<typeof SegmentDetail>;

export const SegmentListQuery = Type.Object({
  status: Type.Optional(StringEnum(SEGMENT_STATUSES)),
  skip: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
});

export const SegmentEvaluateBody = Type.Object({ user_context: UserContext }, { additionalProperties: false, examples: [
  { user_context: { user_id: 'user-123', country: 'US', plan: 'pro' } },
] });

export const SegmentEvaluation = Type.Object({
  segment_id: Uuid(),
  is_member: Type.Boolean(),
  matched_rules: Type.Array(Type.String(), { description: 'Each satisfied condition as `<attribute> <operator> <value>`; empty when not a member' }),
});
export type SegmentEvaluation = Static<typeof SegmentEvaluation>;

export const BulkEvaluateBody = Type.Object(
  {
    user_context: UserContext,
    segment_ids: Type.Array(Uuid(), { minItems: 1, maxItems: MAX_BULK_EVALUATE_SEGMENTS, uniqueItems: true }),
  },
  { additionalProperties: false, examples: [
    {
      user_context: { user_id: 'user-123', country: 'US', plan: 'pro' },
      segment_ids: ['d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70', '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d'],
    },
  ] },
);

export const BulkEvaluation = Type.Object({
  results: Type.Record(Type.String(), Type.Boolean(), { description: 'Segment id to membership; unknown segments and old-format rules are false' }),
});

const FlagUse = Type.Object({ id: Uuid(), key: Type.String(), name: Type.String(), status: Type.String() });
const ExperimentUse = Type.Object({ id: Uuid(), key: Type.String(), name: Type.String(), status: Type.String() });

export const SegmentUsage = Type.Object({
  segment_id: Uuid(),
  experiments: Type.Array(ExperimentUse),
  feature_flags: Type.Array(FlagUse),
});
export type SegmentUsage = Static<typeof SegmentUsage>;

export const PreviewQuery = Type.Object({
  sample_size: Type.Integer({ minimum: PREVIEW_SAMPLE.min, maximum: PREVIEW_SAMPLE.max, default: PREVIEW_SAMPLE.default }),
});
export const PreviewBody = Type.Object(
  { rules: Type.Optional(RulesInput) },
  { additionalProperties: false, description: 'Rules to preview; the stored rules when omitted', examples: [
    {
      rules: {
        logical_operator: 'AND',
        groups: [
          { logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'in', value: ['US', 'CA'] }] },
        ],
      },
    },
  ] },
);
export const PreviewResult = Type.Object({
  estimated_percentage: Type.Number({ description: 'Share of sampled contexts that match, 0 to 100; 0.0 with sample_size 0 means no data' }),
  sample_size: Type.Integer({ description: 'Stored contexts actually sampled' }),
  matched: Type.Integer(),
});

const MemberIds = Type.Array(Type.String({ minLength: 1, maxLength: MAX_MEMBER_ID_LENGTH }), {
  minItems: 1,
  maxItems: MAX_IDS_PER_MEMBER_REQUEST,
});
export const MembersAddBody = Type.Object({ add: MemberIds }, { additionalProperties: false, examples: [
  { add: ['user-1001', 'user-1002', 'user-1003'] },
] });
export const MembersRemoveBody = Type.Object({ remove: MemberIds }, { additionalProperties: false, examples: [
  { remove: ['user-1002'] },
] });
export const MembersAdded = Type.Object({ added: Type.Integer(), already_members: Type.Integer(), member_count: Type.Integer() });
export const MembersRemoved = Type.Object({ removed: Type.Integer(), not_members: Type.Integer(), member_count: Type.Integer() });

/** What the in-use conflict names (spec, "Segments": 409 `segment_in_use`). */
export interface SegmentUser {
  id: string;
  key: string;
  name: string;
  status: string;
}
