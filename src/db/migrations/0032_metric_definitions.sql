-- Metric library (issue 32): metrics defined once and referenced by experiments.
--
-- kind:        proportion | mean | ratio | quantile
-- event_name:  the event read by proportion, mean and quantile metrics (null for ratio)
-- aggregate:   the per-user value of mean and quantile metrics: count of events or sum of their values (else null)
-- numerator, denominator: ratio metrics only, each {event_name, aggregate}
-- quantile:    quantile metrics only, p in (0, 1)
-- capping:     {"type":"none"} | {"type":"absolute","value":v} | {"type":"percentile","p":p} (mean and ratio metrics)
-- version:     1 on create, +1 on every edit that changes the definition (analyses record the version they used)
CREATE TABLE metric_definitions (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  description text,
  kind text NOT NULL,
  event_name text,
  aggregate text,
  numerator json,
  denominator json,
  quantile double precision,
  capping json NOT NULL,
  higher_is_better boolean NOT NULL DEFAULT true,
  tags text[] NOT NULL DEFAULT '{}',
  owner text,
  created_by uuid REFERENCES users(id) ON DELETE SET NULL,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX metric_definitions_name_key ON metric_definitions (name);

-- An experiment metric may name a definition. Deleting a definition is refused while an active or paused experiment
-- uses it (the service checks); a draft, completed or archived experiment keeps its metric as spelled out.
ALTER TABLE experiment_metrics
  ADD COLUMN metric_definition_id uuid REFERENCES metric_definitions(id) ON DELETE SET NULL;
CREATE INDEX experiment_metrics_definition_idx ON experiment_metrics (metric_definition_id) WHERE metric_definition_id IS NOT NULL;
