import { Type, type Static } from 'typebox';
import { DateTime, Nullable, Uuid } from '../../platform/schemas.js';

const Threshold = Type.Number({
  exclusiveMinimum: 0, maximum: 1_000_000,
  description: 'Counted error reports per minute above which a monitored flag is rolled back',
});
const WindowMinutes = Type.Integer({ minimum: 1, maximum: 1440, description: 'Minutes of error reports the error rate looks at' });

export const SettingsView = Type.Object({
  auto_rollback_enabled: Type.Boolean({ description: 'false stops every automatic rollback (checks still report)' }),
  error_rate_threshold: Type.Number(),
  window_minutes: Type.Integer(),
  updated_at: Nullable(DateTime({ description: 'null while every setting has its default' })),
});
export type SettingsView = Static<typeof SettingsView>;

export const SettingsUpdate = Type.Object(
  {
    auto_rollback_enabled: Type.Optional(Type.Boolean()),
    error_rate_threshold: Type.Optional(Threshold),
    window_minutes: Type.Optional(WindowMinutes),
  },
  { additionalProperties: false, examples: [
    { auto_rollback_enabled: true, error_rate_threshold: 5, window_minutes: 15 },
  ] },
);
export type SettingsUpdate = Static<typeof SettingsUpdate>;

/** Per-flag overrides of the global threshold and window; an absent key uses the global setting. */
export const SafetyMetrics = Type.Object(
  { error_rate_threshold: Type.Optional(Threshold), window_minutes: Type.Optional(WindowMinutes) },
  { additionalProperties: false },
);

export const ConfigUpdate = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'Monitor this flag and roll it back automatically (default false)' })),
    metrics: Type.Optional(SafetyMetrics),
    rollback_percentage: Type.Optional(Type.Integer({
      minimum: 0, maximum: 100, description: 'Rollout percentage a rollback sets; 0 (default) turns the flag off',
    })),
    environment: Type.Optional(Type.String({
      minLength: 1, maxLength: 64, pattern: '^[a-z0-9_-]{1,64}$',
      description: 'The environment whose rollout is watched and rolled back (absent: the default environment; unknown: 422)',
    })),
  },
  { additionalProperties: false, examples: [
    { enabled: true, metrics: { error_rate_threshold: 2, window_minutes: 10 }, rollback_percentage: 0 },
  ] },
);
export type ConfigUpdate = Static<typeof ConfigUpdate>;

export const ConfigView = Type.Object({
  flag_id: Uuid(),
  enabled: Type.Boolean(),
  metrics: SafetyMetrics,
  rollback_percentage: Type.Integer(),
  last_rollback_at: Nullable(DateTime()),
  created_at: Nullable(DateTime({ description: 'null while the flag has no stored config (defaults shown)' })),
  updated_at: Nullable(DateTime()),
  environment: Type.Optional(Type.String({ description: 'The environment watched and rolled back; absent: the default environment' })),
});
export type ConfigView = Static<typeof ConfigView>;

export const CheckView = Type.Object({
  flag_id: Uuid(),
  flag_key: Type.String(),
  enabled: Type.Boolean({ description: "The flag's safety config is enabled" }),
  auto_rollback_enabled: Type.Boolean({ description: 'The global setting' }),
  window_minutes: Type.Integer(),
  window_start: DateTime({ description: 'Start of the counted window: the window length back, or the last rollback if later' }),
  error_count: Type.Integer({ description: 'Counted error reports in the window' }),
  uncounted_error_count: Type.Integer({ description: 'Reports from untrusted keys in the window; never trigger a rollback' }),
  error_rate: Type.Number({ description: 'error_count divided by window_minutes: counted errors per minute' }),
  error_rate_threshold: Type.Number(),
  threshold_exceeded: Type.Boolean({ description: 'error_rate above error_rate_threshold' }),
  would_roll_back: Type.Boolean({ description: 'The scheduler would roll the flag back now' }),
  rollback_percentage: Type.Integer(),
  last_rollback_at: Nullable(DateTime()),
  checked_at: DateTime(),
});
export type CheckView = Static<typeof CheckView>;

export const RollbackQuery = Type.Object({
  percentage: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: "Default: the flag's rollback_percentage; 0 turns the flag off" })),
  reason: Type.Optional(Type.String({ maxLength: 500 })),
});
export type RollbackQuery = Static<typeof RollbackQuery>;

export const RollbackView = Type.Object({
  flag_id: Uuid(),
  flag_key: Type.String(),
  percentage: Type.Integer(),
  reason: Nullable(Type.String()),
  automatic: Type.Boolean(),
  is_active: Type.Boolean({ description: 'The flag after the rollback' }),
  rollout_percentage: Type.Integer({ description: 'The flag after the rollback' }),
  paused_schedule_ids: Type.Array(Uuid()),
  rolled_back_at: DateTime(),
});
export type RollbackView = Static<typeof RollbackView>;

export const FlagParams = Type.Object({ flag_id: Uuid() });
