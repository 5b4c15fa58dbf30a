-- Results diagnostics (issue 19): SRM per assignment-context dimension, users exposed to more than one variant, and
-- the per-experiment SRM settings and alert state. All derived from assignments and events except srm auto_pause.

-- Assigned users per scalar top-level context value and variant, rolled up with the assignments stream.
CREATE TABLE result_context_values (
  experiment_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  attribute text NOT NULL,
  value text NOT NULL,
  variant_id uuid NOT NULL,
  users bigint NOT NULL,
  PRIMARY KEY (experiment_id, attribute, value, variant_id)
);

-- Context attributes with more distinct values than the diagnosis keeps (user ids, emails): no longer rolled up.
CREATE TABLE result_context_over_limit (
  experiment_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  attribute text NOT NULL,
  PRIMARY KEY (experiment_id, attribute)
);

-- Assigned users with a tracked event naming another variant: excluded from the analysis.
CREATE TABLE result_excluded_users (
  experiment_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  user_id text NOT NULL,
  variant_id uuid NOT NULL,
  first_seen timestamptz NOT NULL,
  PRIMARY KEY (experiment_id, user_id)
);

-- SRM auto-pause opt-in and what the results-rollup job last did about a mismatch.
CREATE TABLE result_srm_state (
  experiment_id uuid PRIMARY KEY REFERENCES experiments (id) ON DELETE CASCADE,
  auto_pause boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now(),
  alerted_at timestamptz,
  auto_paused_at timestamptz,
  alert_p_value double precision
);

-- Per-user totals are no longer kept: writing one row per converting user made the first computation of a large
-- experiment cost several times a scan of its events; an incremental rollup reads its users' earlier totals from
-- their events instead (docs/statistics.md, "Rollups").
DROP TABLE result_user_totals;
