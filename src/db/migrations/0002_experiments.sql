CREATE TABLE experiments (
  id uuid PRIMARY KEY,
  key text NOT NULL,
  name text NOT NULL,
  description text,
  hypothesis text,
  experiment_type text NOT NULL DEFAULT 'a_b' CHECK (experiment_type IN ('a_b', 'mv', 'split_url', 'bandit')),
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'paused', 'completed', 'archived')),
  targeting_rules jsonb,
  correction_method text NOT NULL DEFAULT 'benjamini_hochberg' CHECK (correction_method IN ('none', 'bonferroni', 'benjamini_hochberg')),
  confidence_level double precision NOT NULL DEFAULT 0.95,
  sequential_testing_enabled boolean NOT NULL DEFAULT false,
  sequential_testing_config jsonb,
  variance_reduction_config jsonb,
  bayesian_enabled boolean NOT NULL DEFAULT false,
  bayesian_config jsonb,
  bayesian_decision text CHECK (bayesian_decision IN ('CONTINUE', 'STOP_WINNER', 'STOP_EQUIVALENT', 'STOP_FUTILE')),
  split_url_config jsonb,
  metadata jsonb,
  owner_id uuid REFERENCES users (id) ON DELETE SET NULL,
  start_date timestamp with time zone,
  end_date timestamp with time zone,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX experiments_key_key ON experiments (key);
CREATE INDEX experiments_status_idx ON experiments (status);
CREATE INDEX experiments_created_at_idx ON experiments (created_at);

CREATE TABLE experiment_variants (
  id uuid PRIMARY KEY,
  experiment_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text,
  is_control boolean NOT NULL DEFAULT false,
  traffic_allocation double precision NOT NULL,
  configuration jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX experiment_variants_name_key ON experiment_variants (experiment_id, name);

CREATE TABLE experiment_metrics (
  id uuid PRIMARY KEY,
  experiment_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text,
  event_name text NOT NULL,
  metric_type text NOT NULL DEFAULT 'conversion' CHECK (metric_type IN ('conversion', 'count', 'revenue', 'duration')),
  is_primary boolean NOT NULL DEFAULT false,
  expected_effect double precision,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX experiment_metrics_experiment_idx ON experiment_metrics (experiment_id);

CREATE TABLE mutual_exclusion_groups (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  description text,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive', 'archived')),
  traffic_allocation jsonb,
  created_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE mutual_exclusion_members (
  group_id uuid NOT NULL REFERENCES mutual_exclusion_groups (id) ON DELETE CASCADE,
  experiment_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  added_at timestamptz NOT NULL DEFAULT now(),
  seq bigserial NOT NULL,
  PRIMARY KEY (group_id, experiment_id)
);
CREATE INDEX mutual_exclusion_members_experiment_idx ON mutual_exclusion_members (experiment_id);

CREATE TABLE holdouts (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  description text,
  percentage double precision NOT NULL CHECK (percentage >= 0 AND percentage <= 100),
  is_active boolean NOT NULL DEFAULT true,
  created_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX holdouts_one_active ON holdouts (is_active) WHERE is_active;

CREATE TABLE wizard_drafts (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  current_step integer NOT NULL DEFAULT 1,
  data jsonb NOT NULL DEFAULT '{}'::jsonb,
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'submitted')),
  experiment_id uuid REFERENCES experiments (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX wizard_drafts_user_idx ON wizard_drafts (user_id, updated_at);

CREATE TABLE scheduler_jobs (
  name text PRIMARY KEY,
  next_run_at timestamptz NOT NULL
);

CREATE TABLE scheduler_runs (
  id bigserial PRIMARY KEY,
  job_name text NOT NULL,
  started_at timestamptz NOT NULL,
  finished_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('ok', 'error')),
  error text
);
CREATE INDEX scheduler_runs_job_idx ON scheduler_runs (job_name, started_at);
