CREATE TABLE users (
  id uuid PRIMARY KEY,
  username text NOT NULL,
  email text,
  hashed_password text,
  full_name text,
  role text CHECK (role IN ('ADMIN', 'DEVELOPER', 'ANALYST', 'VIEWER')),
  is_active boolean NOT NULL DEFAULT true,
  is_superuser boolean NOT NULL DEFAULT false,
  last_login timestamptz,
  preferences jsonb,
  external_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_username_key ON users (username);
CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email));
CREATE UNIQUE INDEX users_external_id_key ON users (external_id);
CREATE INDEX users_created_at_idx ON users (created_at);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL,
  key_hash text NOT NULL,
  key_prefix text NOT NULL,
  scopes jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX api_keys_key_hash_key ON api_keys (key_hash);
CREATE INDEX api_keys_user_id_idx ON api_keys (user_id);

CREATE TABLE audit_logs (
  id uuid PRIMARY KEY,
  actor_id uuid,
  actor_username text,
  action text NOT NULL,
  entity_type text NOT NULL,
  entity_id text,
  before jsonb,
  after jsonb,
  details jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_logs_entity_idx ON audit_logs (entity_type, entity_id, created_at);
CREATE INDEX audit_logs_actor_idx ON audit_logs (actor_id, created_at);
CREATE INDEX audit_logs_created_at_idx ON audit_logs (created_at);

CREATE TABLE login_failures (
  id bigserial PRIMARY KEY,
  email_key text NOT NULL,
  failed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_failures_email_idx ON login_failures (email_key, failed_at);
