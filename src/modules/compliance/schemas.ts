import { Type, type Static } from 'typebox';
import { DateTime, JsonObject, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

const NullableJsonObject = Nullable(JsonObject());
const Count = Type.Integer({ minimum: 0 });

export const ComplianceEvent = Type.Object({
  id: Uuid(),
  sequence: Type.Integer({ description: 'Position in the signed chain' }),
  timestamp: DateTime(),
  action: Type.String(),
  resource_type: Type.String(),
  resource_id: Nullable(Type.String()),
  actor_id: Nullable(Uuid()),
  actor_username: Nullable(Type.String()),
  before: NullableJsonObject,
  after: NullableJsonObject,
  details: NullableJsonObject,
  previous_signature: Nullable(Type.String({ description: 'hmac_signature of the event at sequence - 1; null for the first' })),
  hmac_signature: Type.String({
    description: 'Hex HMAC-SHA256 with COMPLIANCE_HMAC_KEY over the canonical form, which includes previous_signature',
  }),
  signature_valid: Type.Boolean({ description: 'The signature matches the stored content and the chain link to the previous event holds' }),
});
export type ComplianceEvent = Static<typeof ComplianceEvent>;

const TimeRange = {
  start_time: Type.Optional(DateTime()),
  end_time: Type.Optional(DateTime()),
};

export const EventsQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  resource_type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  actor_id: Type.Optional(Uuid()),
  ...TimeRange,
});
export type EventsQuery = Static<typeof EventsQuery>;

export const EventsPage = Type.Object({
  items: Type.Array(ComplianceEvent),
  total: Count,
  page: Type.Integer(),
  limit: Type.Integer(),
});

export const ReportQuery = (defaultDays: number) =>
  Type.Object({ period_days: Type.Integer({ minimum: 1, maximum: 3650, default: defaultDays, description: 'Period ending now' }) });

export const ComplianceReport = Type.Object({
  framework: StringEnum(['SOC2', 'ISO27001']),
  generated_at: DateTime(),
  period_start: DateTime(),
  period_end: DateTime(),
  period_days: Type.Integer(),
  total_events: Count,
  unique_actors: Count,
  events_by_action: Type.Array(Type.Object({ action: Type.String(), count: Count })),
  controls: Type.Array(
    Type.Object({
      control_id: Type.String(),
      title: Type.String(),
      evidence_count: Count,
      evidence_actions: Type.Array(Type.String(), { description: 'Actions seen in the period that count as evidence' }),
    }),
  ),
  integrity: Type.Object({
    events_checked: Count,
    intact: Count,
    tampered: Count,
    first_tampered_sequence: Nullable(Type.Integer()),
  }),
  notes: Type.Array(Type.String()),
});
export type ComplianceReport = Static<typeof ComplianceReport>;

export const ExportQuery = Type.Object({
  format: StringEnum(['json', 'csv'], { default: 'json' }),
  ...TimeRange,
});
export type ExportQuery = Static<typeof ExportQuery>;

export const ExportJson = Type.Object({
  exported_at: DateTime(),
  start_time: Nullable(DateTime()),
  end_time: Nullable(DateTime()),
  count: Count,
  events: Type.Array(ComplianceEvent),
});
export type ExportJson = Static<typeof ExportJson>;
