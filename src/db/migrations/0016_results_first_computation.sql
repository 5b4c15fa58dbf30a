-- Results, first computation (issue 19).
--
-- Exposure consistency looks for tracked events that name a variant other than the user's assignment. Only events
-- that carry a variant can, so this partial index holds just those, in (experiment, time) order: the first check
-- reads one range of it and a refresh only the window since its watermark, where both used to scan every event.
CREATE INDEX events_exposure_idx ON events (experiment_id, created_at) INCLUDE (user_id, variant_id)
  WHERE variant_id IS NOT NULL AND kind = 'track';

-- Whether a metric stream's rollup holds the value columns of result_variant_days (value_sum, value_square_delta).
-- A first computation leaves them out (zero) when only conversion and count metrics read the event, since the
-- running value per user is a large part of its work; a value metric on the event later rebuilds the stream.
-- Rollups built before this column have them.
ALTER TABLE result_watermarks ADD COLUMN with_values boolean NOT NULL DEFAULT true;

-- assignments_user_idx serves lookups of one user's assignments, by equality only. As a hash index it is smaller for
-- long ids, and the planner can no longer take it for a scan in user order: on a table that holds mostly one
-- experiment it would read a results pass's assignments through the heap rather than index-only from
-- assignments_experiment_user_key.
DROP INDEX assignments_user_idx;
CREATE INDEX assignments_user_idx ON assignments USING hash (user_id);

-- The same for events_user_idx: a results refresh finds a user's earlier events of a metric index-only through
-- events_experiment_idx, where a btree on (user_id, created_at) looked as cheap to the planner and visited the heap
-- for every event of the user. Lookups of one user's events stay equality lookups.
DROP INDEX events_user_idx;
CREATE INDEX events_user_idx ON events USING hash (user_id);
