-- Results rollup, per-user totals (issue 31, docs/adr/0007-rollup-follows-commits.md).
--
-- Each user's counted totals of a metric event (events, sum of values) as of the metric stream's watermark, so that
-- a rollup window (and a read of the tail since the watermark) reads one row per user of its own events instead of
-- counting every earlier event of those users. A user without counted events has no row. A window adds to its
-- users' rows in the transaction that moves the watermark; a first computation writes every user's row.
CREATE TABLE result_user_totals (
  experiment_id uuid NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  event_name text NOT NULL,
  user_id text NOT NULL,
  event_count bigint NOT NULL,
  value_sum double precision NOT NULL,
  PRIMARY KEY (experiment_id, event_name, user_id)
);

-- Metric rollups built before kept no per-user totals: they are built again from the start (a read meanwhile counts
-- the metric from the start, as for a first computation).
DELETE FROM result_variant_days;
DELETE FROM result_watermarks WHERE stream LIKE 'metric:%';
