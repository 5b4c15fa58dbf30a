-- Results: the first computation of an experiment reads every counted event of a metric in user order and merges it
-- with the experiment's assignments, also in user order. With these INCLUDE columns both scans are index-only, so
-- that pass needs no sort, no hash of the experiment's users and no visit to the heap (issue 19). The key columns
-- are unchanged: every query that used the two indexes still does.
DROP INDEX events_experiment_idx;
CREATE INDEX events_experiment_idx ON events (experiment_id, event_name, user_id, created_at) INCLUDE (kind, value, feature_flag_id);

DROP INDEX assignments_experiment_user_key;
CREATE UNIQUE INDEX assignments_experiment_user_key ON assignments (experiment_id, user_id) INCLUDE (variant_id, created_at);
