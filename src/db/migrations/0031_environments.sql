-- Environments (issue 29): one Uplift for development, staging and production. A flag's serving state (status,
-- rollout, targeting rules, segments named and the serving fields of typed flags) is held per environment in
-- flag_environment_states; what a flag is (key, name, description, tags, value type, variations, owner) stays in
-- feature_flags, shared. The first start creates `production` as the default environment; every existing flag's state
-- becomes production's and every existing API key belongs to production, so every flag answers exactly as before.
CREATE TABLE environments (
  key text PRIMARY KEY CHECK (key ~ '^[a-z0-9_-]{1,64}$'),
  name text NOT NULL,
  description text,
  color text,
  sort_order integer NOT NULL DEFAULT 0,
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- Exactly one default: at most one by this index, at least one because the service only ever moves it.
CREATE UNIQUE INDEX environments_one_default ON environments (is_default) WHERE is_default;
INSERT INTO environments (key, name, description, sort_order, is_default)
VALUES ('production', 'Production', 'The default environment', 0, true);

CREATE TABLE flag_environment_states (
  flag_id uuid NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
  environment text NOT NULL REFERENCES environments (key) ON DELETE CASCADE,
  status text NOT NULL DEFAULT 'INACTIVE' CHECK (status IN ('ACTIVE', 'INACTIVE', 'ARCHIVED')),
  rollout_percentage integer NOT NULL DEFAULT 0 CHECK (rollout_percentage BETWEEN 0 AND 100),
  targeting_rules json,
  segment_ids text[] NOT NULL DEFAULT '{}'::text[],
  default_variation text,
  off_variation text,
  variation_rules json,
  variation_split json,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (flag_id, environment)
);
CREATE INDEX flag_environment_states_environment_idx ON flag_environment_states (environment, flag_id);
CREATE INDEX flag_environment_states_segment_ids_idx ON flag_environment_states USING gin (segment_ids);

INSERT INTO flag_environment_states
  (flag_id, environment, status, rollout_percentage, targeting_rules, segment_ids, default_variation, off_variation,
   variation_rules, variation_split, updated_at)
SELECT id, 'production', status, rollout_percentage, targeting_rules, segment_ids, default_variation, off_variation,
       variation_rules, variation_split, updated_at
FROM feature_flags;

DROP INDEX IF EXISTS feature_flags_segment_ids_idx;
ALTER TABLE feature_flags
  DROP COLUMN status,
  DROP COLUMN rollout_percentage,
  DROP COLUMN targeting_rules,
  DROP COLUMN segment_ids,
  DROP COLUMN default_variation,
  DROP COLUMN off_variation,
  DROP COLUMN variation_rules,
  DROP COLUMN variation_split;

-- Every key belongs to one environment (existing keys: production); an environment keys belong to is not deleted.
ALTER TABLE api_keys ADD COLUMN environment text NOT NULL DEFAULT 'production' REFERENCES environments (key) ON DELETE RESTRICT;
ALTER TABLE api_keys ALTER COLUMN environment DROP DEFAULT;
CREATE INDEX api_keys_environment_idx ON api_keys (environment);

-- Rollout schedules and flag safety act on the environment they name (null: the default environment).
ALTER TABLE rollout_schedules ADD COLUMN environment text REFERENCES environments (key) ON DELETE CASCADE;
ALTER TABLE safety_flag_configs ADD COLUMN environment text REFERENCES environments (key) ON DELETE CASCADE;
