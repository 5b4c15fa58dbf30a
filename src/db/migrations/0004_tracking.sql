CREATE TABLE assignments (
  id uuid PRIMARY KEY,
  experiment_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  variant_id uuid NOT NULL,
  user_id text NOT NULL,
  context jsonb,
  source text NOT NULL DEFAULT 'assign',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX assignments_experiment_user_key ON assignments (experiment_id, user_id);
CREATE INDEX assignments_user_idx ON assignments (user_id);
CREATE INDEX assignments_experiment_variant_idx ON assignments (experiment_id, variant_id, created_at);

CREATE TABLE events (
  id uuid NOT NULL,
  event_name text NOT NULL,
  user_id text,
  experiment_id uuid,
  feature_flag_id uuid,
  variant_id uuid,
  value double precision,
  metadata jsonb,
  kind text NOT NULL DEFAULT 'track',
  created_at timestamptz NOT NULL,
  PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
CREATE TABLE events_default PARTITION OF events DEFAULT;
-- Results aggregate per experiment, metric event and user; views are counted per experiment and variant.
CREATE INDEX events_experiment_idx ON events (experiment_id, event_name, user_id, created_at);
CREATE INDEX events_feature_flag_idx ON events (feature_flag_id) WHERE feature_flag_id IS NOT NULL;
CREATE INDEX events_user_idx ON events (user_id, created_at);

CREATE TABLE experiment_counters (
  experiment_id uuid NOT NULL,
  name text NOT NULL,
  value bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (experiment_id, name)
);

CREATE TABLE bandit_states (
  experiment_id uuid PRIMARY KEY REFERENCES experiments (id) ON DELETE CASCADE,
  weights jsonb NOT NULL,
  source text NOT NULL,
  engine_version text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
