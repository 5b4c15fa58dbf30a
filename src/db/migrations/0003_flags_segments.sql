CREATE TABLE segments (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  description text,
  kind text NOT NULL DEFAULT 'rules' CHECK (kind IN ('rules', 'id_list')),
  rules json,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive', 'archived')),
  member_count integer NOT NULL DEFAULT 0,
  owner_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX segments_status_idx ON segments (status, created_at);
CREATE INDEX segments_owner_id_idx ON segments (owner_id);

CREATE TABLE segment_members (
  segment_id uuid NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
  member_id text NOT NULL,
  CONSTRAINT segment_members_pkey PRIMARY KEY (segment_id, member_id)
);

CREATE TABLE feature_flags (
  id uuid PRIMARY KEY,
  key text NOT NULL,
  name text NOT NULL,
  description text,
  status text NOT NULL DEFAULT 'INACTIVE' CHECK (status IN ('ACTIVE', 'INACTIVE', 'ARCHIVED')),
  rollout_percentage integer NOT NULL DEFAULT 0 CHECK (rollout_percentage BETWEEN 0 AND 100),
  targeting_rules json,
  segment_ids text[] NOT NULL DEFAULT '{}'::text[],
  default_value boolean NOT NULL DEFAULT false,
  tags jsonb,
  owner_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX feature_flags_key_key ON feature_flags (key);
CREATE INDEX feature_flags_created_at_idx ON feature_flags (created_at);
CREATE INDEX feature_flags_segment_ids_idx ON feature_flags USING gin (segment_ids);
