-- Warehouse analysis (beta): connections to customer warehouses, source definitions over their tables, and the
-- durable run queue (analyses and previews) that any API process drains with FOR UPDATE SKIP LOCKED.

CREATE TABLE warehouse_connections (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  warehouse_type text NOT NULL,
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- AES-256-GCM under one of WAREHOUSE_CREDENTIALS_KEYS; never returned.
  encrypted_credentials text NOT NULL,
  query_timeout_seconds integer NOT NULL DEFAULT 300,
  max_runs_per_day integer NOT NULL DEFAULT 20,
  bytes_limit bigint,
  worst_case_bytes_per_day bigint,
  worst_case_seconds_per_day bigint,
  created_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE warehouse_sources (
  id uuid PRIMARY KEY,
  -- RESTRICT: a connection that still has sources cannot be deleted (409 connection_in_use).
  connection_id uuid NOT NULL REFERENCES warehouse_connections (id) ON DELETE RESTRICT,
  kind text NOT NULL,
  name text NOT NULL,
  table_name text NOT NULL,
  columns jsonb NOT NULL,
  metric_type text,
  conversion_window_hours integer,
  filters jsonb NOT NULL DEFAULT '[]'::jsonb,
  cap_value double precision,
  validated_at timestamptz,
  validation_errors jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX warehouse_sources_connection_idx ON warehouse_sources (connection_id);

-- Runs keep a snapshot of what they used (definition, connection name), so no foreign keys: a run outlives the
-- sources, connection and experiment it names.
CREATE TABLE warehouse_runs (
  id uuid PRIMARY KEY,
  kind text NOT NULL,
  experiment_id uuid,
  connection_id uuid NOT NULL,
  connection_name text NOT NULL,
  definition jsonb NOT NULL,
  status text NOT NULL DEFAULT 'queued',
  lease_expires_at timestamptz,
  error_code text,
  error_message text,
  results jsonb,
  srm jsonb,
  diagnostics jsonb,
  preview jsonb,
  sql jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);
-- One analysis or preview at a time per connection (spec limits), enforced by the database for every process.
CREATE UNIQUE INDEX warehouse_runs_one_active ON warehouse_runs (connection_id) WHERE status IN ('queued', 'running');
CREATE INDEX warehouse_runs_connection_day_idx ON warehouse_runs (connection_id, created_at);
CREATE INDEX warehouse_runs_experiment_idx ON warehouse_runs (experiment_id, created_at);
CREATE INDEX warehouse_runs_queued_idx ON warehouse_runs (created_at) WHERE status = 'queued';

-- WAREHOUSE_MAX_CONCURRENT_RUNS across the deployment: a running run holds one slot row; workers take a free slot
-- with FOR UPDATE SKIP LOCKED. Rows are added at boot up to the configured limit.
CREATE TABLE warehouse_run_slots (
  slot integer PRIMARY KEY,
  run_id uuid
);
