CREATE TABLE audit_log_seals (
  sequence bigint PRIMARY KEY,
  audit_log_id uuid NOT NULL,
  signature text NOT NULL,
  previous_signature text,
  sealed_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX audit_log_seals_audit_log_id_key ON audit_log_seals (audit_log_id);

CREATE TABLE audit_log_unsealed (
  audit_log_id uuid PRIMARY KEY,
  queued_at timestamptz NOT NULL DEFAULT now()
);
-- Entries written before this migration join the chain at the first seal.
INSERT INTO audit_log_unsealed (audit_log_id) SELECT id FROM audit_logs;

CREATE TABLE notification_preferences (
  user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  email_enabled boolean NOT NULL DEFAULT false,
  email_address text,
  chat_webhook_enabled boolean NOT NULL DEFAULT false,
  chat_webhook_url text,
  events jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE notification_deliveries (
  id uuid PRIMARY KEY,
  notification_id uuid NOT NULL,
  user_id uuid,
  kind text NOT NULL,
  channel text NOT NULL,
  target text NOT NULL,
  attempt integer NOT NULL,
  status text NOT NULL,
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notification_deliveries_created_at_idx ON notification_deliveries (created_at);
CREATE INDEX notification_deliveries_user_idx ON notification_deliveries (user_id, created_at);

CREATE TABLE llm_outputs (
  id uuid PRIMARY KEY,
  experiment_id uuid NOT NULL,
  variant_name text NOT NULL,
  prompt text,
  output text NOT NULL,
  auto_eval_score double precision,
  auto_eval_error text,
  auto_eval_reasoning text,
  judged_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX llm_outputs_experiment_idx ON llm_outputs (experiment_id, variant_name);

CREATE TABLE workspaces (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  slug text NOT NULL,
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX workspaces_slug_key ON workspaces (slug);
INSERT INTO workspaces (id, name, slug, is_default) VALUES (gen_random_uuid(), 'Default', 'default', true);
