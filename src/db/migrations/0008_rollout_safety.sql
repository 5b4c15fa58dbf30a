CREATE TABLE rollout_schedules (
  id uuid PRIMARY KEY,
  flag_id uuid NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text,
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'paused', 'completed', 'cancelled')),
  owner_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rollout_schedules_flag_idx ON rollout_schedules (flag_id, created_at);
CREATE INDEX rollout_schedules_status_idx ON rollout_schedules (status);
CREATE INDEX rollout_schedules_owner_id_idx ON rollout_schedules (owner_id);
CREATE UNIQUE INDEX rollout_schedules_one_active_per_flag ON rollout_schedules (flag_id) WHERE status = 'active';

CREATE TABLE rollout_stages (
  id uuid PRIMARY KEY,
  schedule_id uuid NOT NULL REFERENCES rollout_schedules (id) ON DELETE CASCADE,
  sequence integer NOT NULL,
  percentage integer NOT NULL CHECK (percentage BETWEEN 0 AND 100),
  scheduled_at timestamptz,
  applied_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX rollout_stages_schedule_sequence_key ON rollout_stages (schedule_id, sequence);

CREATE TABLE safety_settings (
  id integer PRIMARY KEY CHECK (id = 1),
  auto_rollback_enabled boolean NOT NULL,
  error_rate_threshold double precision NOT NULL CHECK (error_rate_threshold > 0),
  window_minutes integer NOT NULL CHECK (window_minutes BETWEEN 1 AND 1440),
  updated_at timestamptz NOT NULL
);

CREATE TABLE safety_flag_configs (
  flag_id uuid PRIMARY KEY REFERENCES feature_flags (id) ON DELETE CASCADE,
  enabled boolean NOT NULL,
  metrics jsonb NOT NULL,
  rollback_percentage integer NOT NULL CHECK (rollback_percentage BETWEEN 0 AND 100),
  last_rollback_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE error_reports (
  id uuid PRIMARY KEY,
  flag_id uuid REFERENCES feature_flags (id) ON DELETE SET NULL,
  counted boolean NOT NULL,
  error_type text NOT NULL,
  message text,
  user_id text,
  request_data jsonb NOT NULL,
  api_key_id uuid REFERENCES api_keys (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX error_reports_flag_idx ON error_reports (flag_id, counted, created_at);
CREATE INDEX error_reports_created_at_idx ON error_reports (created_at);
CREATE INDEX error_reports_api_key_idx ON error_reports (api_key_id) WHERE api_key_id IS NOT NULL;
