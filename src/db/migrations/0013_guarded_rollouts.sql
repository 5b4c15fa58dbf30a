-- Guarded rollouts (issue 19): a schedule may name guardrail metrics; every guardrail decision is kept.
ALTER TABLE rollout_schedules ADD COLUMN guardrails jsonb;
CREATE INDEX rollout_schedules_guarded_active_idx ON rollout_schedules (id) WHERE status = 'active' AND guardrails IS NOT NULL;

CREATE TABLE rollout_guardrail_decisions (
  id uuid PRIMARY KEY,
  schedule_id uuid NOT NULL REFERENCES rollout_schedules (id) ON DELETE CASCADE,
  decision text NOT NULL CHECK (decision IN ('advance', 'rollback')),
  stage_id uuid REFERENCES rollout_stages (id) ON DELETE SET NULL,
  next_stage_id uuid REFERENCES rollout_stages (id) ON DELETE SET NULL,
  automatic boolean NOT NULL,
  confidence double precision NOT NULL,
  rollout_percentage integer NOT NULL CHECK (rollout_percentage BETWEEN 0 AND 100),
  exposed_from timestamptz NOT NULL,
  exposed_to timestamptz NOT NULL,
  baseline_from timestamptz NOT NULL,
  baseline_to timestamptz NOT NULL,
  metrics jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX rollout_guardrail_decisions_schedule_idx ON rollout_guardrail_decisions (schedule_id, created_at);
CREATE INDEX rollout_guardrail_decisions_stage_idx ON rollout_guardrail_decisions (stage_id);
CREATE INDEX rollout_guardrail_decisions_next_stage_idx ON rollout_guardrail_decisions (next_stage_id);
