/** The ruleset as GET /api/v1/sdk/ruleset sends it (and as `bootstrap` takes it). */
export interface Ruleset {
  bucketing: { name: string; version: number };
  /** The hash of typed flags' splits (absent from a service without typed flags). */
  split_bucketing?: { name: string; version: number };
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
  /** Typed flags only (a boolean flag has none of these). */
  value_type?: 'string' | 'number' | 'json';
  variations?: Array<{ key: string; value: unknown; name?: string; description?: string }>;
  default_variation?: string | null;
  off_variation?: string | null;
  variation_rules?: Array<{ targeting_rules: unknown; variation?: string; split?: Array<{ variation: string; weight: number }> }> | null;
  variation_split?: Array<{ variation: string; weight: number }> | null;
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
  /** Typed flags: the variation served and its value (absent when the flag is off for the user without off_variation). */
  variation?: string;
  value?: unknown;
  /** Typed flags: how the variation was chosen. */
  variation_reason?: VariationReason;
}

/** How a typed flag chose its variation: off (off_variation or none), a rule's variation, a rule's split, the flag's split, the default. */
export type VariationReason = 'off' | 'rule' | 'rule_split' | 'split' | 'default';

/** What `getDetails` answers: the value the caller gets (its default when the flag serves none), and why. */
export interface ValueDetails<T> {
  value: T;
  /** The variation served; absent when the caller's default is answered. */
  variation?: string;
  /** The flag's reason (as `evaluate`), or `not_found`, or `type_mismatch` when the flag's value is not of the default's type. */
  reason: FlagReason | 'type_mismatch';
  variation_reason?: VariationReason;
  /** True when `value` is the default passed in. */
  is_default: boolean;
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
