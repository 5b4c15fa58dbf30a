CREATE TABLE custom_roles (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  description text,
  is_system_role boolean NOT NULL DEFAULT false,
  permissions jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX custom_roles_name_key ON custom_roles (name);

CREATE TABLE user_custom_roles (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role_id uuid NOT NULL REFERENCES custom_roles (id) ON DELETE CASCADE,
  assigned_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
  reason text,
  assigned_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX user_custom_roles_user_role_key ON user_custom_roles (user_id, role_id);
CREATE INDEX user_custom_roles_role_idx ON user_custom_roles (role_id);

CREATE TABLE direct_permission_grants (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  resource text NOT NULL,
  actions jsonb NOT NULL,
  granted_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
  reason text,
  expires_at timestamptz,
  is_active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX direct_permission_grants_user_idx ON direct_permission_grants (user_id, resource);

CREATE TABLE integrations (
  id uuid PRIMARY KEY,
  integration_type text NOT NULL,
  is_active boolean NOT NULL DEFAULT false,
  public_config jsonb NOT NULL DEFAULT '{}'::jsonb,
  secret_names jsonb NOT NULL DEFAULT '[]'::jsonb,
  encrypted_secrets text,
  last_sync_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT integrations_type_check CHECK (integration_type IN ('jira', 'salesforce', 'github'))
);
CREATE UNIQUE INDEX integrations_type_key ON integrations (integration_type);
