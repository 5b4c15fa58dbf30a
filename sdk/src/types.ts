/** The ruleset as GET /api/v1/sdk/ruleset sends it (and as `bootstrap` takes it). */
export interface Ruleset {
  bucketing: { name: string; version: number };
  flags: RulesetFlag[];
  segments: RulesetSegment[];
}

export interface RulesetFlag {
  id: string;
  key: string;
  status: 'active' | 'inactive' | 'archived';
  is_active: boolean;
  rollout_percentage: number;
  targeting_rules: Record<string, unknown> | null;
  default_value: boolean;
}

export interface RulesetSegment {
  id: string;
  kind: 'rules' | 'id_list';
  status: 'active' | 'inactive' | 'archived';
  rules: unknown;
  valid: boolean;
}

/** The service's flag reasons, plus `not_found` for a key the ruleset does not hold. */
export type FlagReason = 'disabled' | 'targeting_match' | 'targeting_miss' | 'rollout' | 'error' | 'not_found';

/** What POST /api/v1/feature-flags/evaluate/{flag_key} answers, without the key. */
export interface FlagEvaluation {
  enabled: boolean;
  reason: FlagReason;
  /** The satisfied conditions, as the service renders them (when some are). */
  rule?: string;
}

/** Targeting attributes: any JSON object (`{ country: "US" }`, `{ user: { plan: "pro" } }`). */
export type Attributes = Record<string, unknown>;

/** What POST /api/v1/tracking/assign answers. */
export interface Assignment {
  experiment_key: string;
  user_id: string;
  variant_id: string;
  variant_name: string;
  is_control: boolean;
  configuration: Record<string, unknown> | null;
  assigned: boolean;
  reason: 'assigned' | 'holdout' | 'mutual_exclusion' | 'targeting';
}

export interface TrackOptions {
  experimentKey?: string;
  value?: number;
  /** Stored as the event's metadata. */
  properties?: Record<string, unknown>;
}

/** What a client reports to `subscribe` listeners. */
export type UpliftEvent =
  | { type: 'ruleset'; version: string | undefined; changed: string[] }
  | { type: 'error'; error: Error };
