import { Type, type Static } from 'typebox';
import { ERROR_REPORT_SOURCES } from '../../db/schema/error-reports.js';
import { DateTime, JsonObject, Nullable, StringEnum, Uuid } from '../../platform/schemas.js';

export const MAX_BATCH_REPORTS = 1000;

export const ErrorReportBody = Type.Object(
  {
    error_type: Type.String({ minLength: 1, maxLength: 255, description: 'Kind of failure, e.g. TypeError or http_500' }),
    message: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
    feature_flag_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'The flag the failure is attributed to' })),
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    request_data: Type.Optional(JsonObject({ description: 'Free-form context; `source` is set by the server' })),
  },
  { additionalProperties: false, examples: [
    {
      error_type: 'TypeError',
      message: "Cannot read properties of undefined (reading 'price')",
      feature_flag_key: 'new-checkout',
      user_id: 'user-123',
      request_data: { page: '/checkout', browser: 'Firefox 128' },
    },
  ] },
);
export type ErrorReportBody = Static<typeof ErrorReportBody>;

export const ErrorReportView = Type.Object({
  id: Uuid(),
  error_type: Type.String(),
  message: Nullable(Type.String()),
  feature_flag_key: Nullable(Type.String()),
  feature_flag_id: Nullable(Uuid()),
  user_id: Nullable(Type.String()),
  request_data: JsonObject(),
  source: StringEnum(ERROR_REPORT_SOURCES),
  counted: Type.Boolean({ description: "Whether the report counts toward the flag's error rate and automatic rollback" }),
  created_at: DateTime(),
});
export type ErrorReportView = Static<typeof ErrorReportView>;

export const ErrorReportBatchBody = Type.Object(
  { reports: Type.Array(ErrorReportBody, { minItems: 1, maxItems: MAX_BATCH_REPORTS }) },
  { additionalProperties: false, examples: [
    {
      reports: [
        {
          error_type: 'TypeError',
          message: "Cannot read properties of undefined (reading 'price')",
          feature_flag_key: 'new-checkout',
          user_id: 'user-123',
        },
        {
          error_type: 'http_500',
          feature_flag_key: 'new-checkout',
          user_id: 'user-456',
          request_data: { path: '/api/cart' },
        },
      ],
    },
  ] },
);
export type ErrorReportBatchBody = Static<typeof ErrorReportBatchBody>;

export const ErrorReportBatchView = Type.Object({
  received: Type.Integer(),
  stored: Type.Integer(),
  failed: Type.Integer(),
  counted: Type.Boolean({ description: 'Whether the stored reports count toward error rates (decided by the key)' }),
  results: Type.Array(Type.Object({ index: Type.Integer(), success: Type.Boolean(), id: Type.Optional(Uuid()), error: Type.Optional(Type.String()) })),
  errors: Type.Array(Type.Object({ index: Type.Integer(), error: Type.String() })),
});
export type ErrorReportBatchView = Static<typeof ErrorReportBatchView>;
