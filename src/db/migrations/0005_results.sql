CREATE TABLE result_watermarks (
  experiment_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  stream text NOT NULL,
  rolled_up_to timestamptz,
  PRIMARY KEY (experiment_id, stream)
);

CREATE TABLE result_assignment_days (
  experiment_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  variant_id uuid NOT NULL,
  day date NOT NULL,
  users bigint NOT NULL,
  PRIMARY KEY (experiment_id, variant_id, day)
);

CREATE TABLE result_user_totals (
  experiment_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  event_name text NOT NULL,
  user_id text NOT NULL,
  variant_id uuid NOT NULL,
  event_count bigint NOT NULL,
  value_sum double precision NOT NULL,
  PRIMARY KEY (experiment_id, event_name, user_id)
);

CREATE TABLE result_variant_days (
  experiment_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  event_name text NOT NULL,
  variant_id uuid NOT NULL,
  day date NOT NULL,
  converters bigint NOT NULL,
  event_count bigint NOT NULL,
  count_square_delta double precision NOT NULL,
  value_sum double precision NOT NULL,
  value_square_delta double precision NOT NULL,
  PRIMARY KEY (experiment_id, event_name, variant_id, day)
);

-- The rollup refresh reads only events newer than a watermark. Events are appended in created_at order, so a BRIN
-- index finds the recent block ranges at almost no cost to ingestion (a B-tree would add a write per event).
-- autosummarize summarises each filled range soon after (unsummarised ranges always match, so they would be read).
CREATE INDEX events_created_at_brin ON events USING brin (created_at) WITH (pages_per_range = 32, autosummarize = on);
