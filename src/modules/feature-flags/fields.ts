/**
 * A flag's fields: which are audited and which are held per environment, the wire views of a flag and of one
 * environment's state, and the typed-flag fields of a change (merged over the stored ones, checked, stored). Pure.
 */
import type { FeatureFlagRow, FlagStateRow } from '../../db/schema/feature-flags.js';
import type { Loc } from '../../platform/errors.js';
import {
  validateTypedFields,
  VARIATION_MESSAGES,
  type FlagVariation,
  type SplitEntry,
  type TypedFields,
  type VariationRule,
} from '../../targeting/index.js';
import type { FlagEnvironmentState, FlagView } from './schemas.js';

/** The stored fields a change may touch, with their names on the wire (audit entries use wire names). */
export const AUDITED_FIELDS = {
  key: 'key',
  name: 'name',
  description: 'description',
  status: 'status',
  rolloutPercentage: 'rollout_percentage',
  targetingRules: 'targeting_rules',
  defaultValue: 'default_value',
  tags: 'tags',
  valueType: 'value_type',
  variations: 'variations',
  defaultVariation: 'default_variation',
  offVariation: 'off_variation',
  variationRules: 'variation_rules',
  variationSplit: 'variation_split',
} as const;
/** The audited fields held per environment (a change of only these is one environment's change). */
export const STATE_AUDITED = new Set<string>(['status', 'rolloutPercentage', 'targetingRules', 'defaultVariation', 'offVariation', 'variationRules', 'variationSplit']);
/** The typed-flag fields: stored name by wire name. */
export const TYPED_COLUMNS = {
  value_type: 'valueType',
  variations: 'variations',
  default_variation: 'defaultVariation',
  off_variation: 'offVariation',
  variation_rules: 'variationRules',
  variation_split: 'variationSplit',
} as const satisfies Record<keyof TypedFields, keyof FeatureFlagRow>;
export type FlagValues = Partial<Pick<FeatureFlagRow, keyof typeof AUDITED_FIELDS | 'segmentIds'>>;

/** One environment's state of a flag on the wire; typed serving fields only for typed flags. */
export function toStateView(state: Omit<FlagStateRow, 'flagId' | 'environment'>, valueType: FeatureFlagRow['valueType']): FlagEnvironmentState {
  const view: FlagEnvironmentState = {
    is_active: state.status === 'ACTIVE',
    status: state.status.toLowerCase() as FlagEnvironmentState['status'],
    rollout_percentage: state.rolloutPercentage,
    targeting_rules: (state.targetingRules ?? null) as FlagEnvironmentState['targeting_rules'],
    updated_at: state.updatedAt.toISOString(),
  };
  if (valueType === 'boolean') return view;
  return {
    ...view,
    default_variation: state.defaultVariation,
    off_variation: state.offVariation,
    variation_rules: (state.variationRules ?? null) as FlagEnvironmentState['variation_rules'],
    variation_split: state.variationSplit ?? null,
  };
}

/**
 * A flag as `row.environment` serves it; with `states` (every state row of the flag), `environments` holds every
 * environment's state. Without them the view is exactly the one before environments.
 */
export function toFlagView(row: FeatureFlagRow, states?: FlagStateRow[]): FlagView {
  let environments: Record<string, FlagEnvironmentState> | undefined;
  if (states) {
    environments = {};
    for (const state of states) environments[state.environment] = toStateView(state, row.valueType);
  }
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    description: row.description,
    status: row.status.toLowerCase() as FlagView['status'],
    is_active: row.status === 'ACTIVE',
    rollout_percentage: row.rolloutPercentage,
    targeting_rules: (row.targetingRules ?? null) as FlagView['targeting_rules'],
    default_value: row.defaultValue,
    tags: row.tags ?? null,
    owner_id: row.ownerId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    ...typedView(row),
    ...(environments ? { environments } : {}),
  };
}

/** A typed flag's fields on the wire; none for a boolean flag, whose view is as it was before typed flags. */
function typedView(row: FeatureFlagRow): Partial<FlagView> {
  if (row.valueType === 'boolean') return {};
  return {
    value_type: row.valueType,
    variations: row.variations ?? [],
    default_variation: row.defaultVariation,
    off_variation: row.offVariation,
    variation_rules: (row.variationRules ?? null) as FlagView['variation_rules'],
    variation_split: row.variationSplit ?? null,
  };
}

/** The audited fields of a flag; a boolean flag's snapshot has no typed field (as before typed flags). */
export function snapshotOf(row: FeatureFlagRow): Record<string, unknown> {
  const typed = new Set<string>(Object.values(TYPED_COLUMNS));
  return Object.fromEntries(
    Object.entries(AUDITED_FIELDS)
      .filter(([field]) => row.valueType !== 'boolean' || !typed.has(field))
      .map(([field, wire]) => [wire, row[field as keyof typeof AUDITED_FIELDS]]),
  );
}


/** The typed-flag fields a stored row holds (a row of a boolean flag: value_type boolean, the rest null). */
export function typedFieldsOf(row: Pick<FeatureFlagRow, (typeof TYPED_COLUMNS)[keyof typeof TYPED_COLUMNS]>): TypedFields {
  return {
    value_type: row.valueType,
    variations: row.variations ?? null,
    default_variation: row.defaultVariation,
    off_variation: row.offVariation,
    variation_rules: row.variationRules ?? null,
    variation_split: row.variationSplit ?? null,
  };
}

/** The typed fields a create or update body sends (undefined: not sent; null: cleared). */
export type TypedBody = Partial<{ [K in keyof TypedFields]: TypedFields[K] | undefined }>;

/**
 * The typed fields after a change: the stored ones (a new flag: none) with the sent ones over them. default_variation
 * and variation_split replace each other, so sending one clears the other (sending both is refused by the check).
 */
export function mergeTyped(stored: TypedFields, body: TypedBody): TypedFields {
  const next: TypedFields = { ...stored };
  for (const field of Object.keys(TYPED_COLUMNS) as Array<keyof TypedFields>) {
    if (body[field] !== undefined) (next as unknown as Record<string, unknown>)[field] = body[field];
  }
  if (body.default_variation !== undefined && body.variation_split === undefined) next.variation_split = null;
  if (body.variation_split !== undefined && body.default_variation === undefined) next.default_variation = null;
  return next;
}

/**
 * Every problem of the typed fields after the change, each at its place in the body. A stored field that names a
 * variation the body's `variations` no longer has is reported at body.variations (the variation cannot be removed).
 */
export function typedProblems(next: TypedFields, body: TypedBody, stored: TypedFields | null): Array<{ type: string; loc: Loc; msg: string }> {
  const issues: Array<{ type: string; loc: Loc; msg: string }> = [];
  if (stored && body.value_type !== undefined && body.value_type !== stored.value_type) {
    issues.push({ type: 'value_error', loc: ['body', 'value_type'], msg: VARIATION_MESSAGES.valueTypeFixed });
    return issues;
  }
  let removed = false;
  for (const problem of validateTypedFields(next)) {
    const field = problem.loc[0] as keyof TypedFields;
    if (stored && body[field] === undefined && problem.msg === VARIATION_MESSAGES.unknownVariation && body.variations !== undefined) {
      if (!removed) issues.push({ type: 'value_error', loc: ['body', 'variations'], msg: VARIATION_MESSAGES.variationRemoved });
      removed = true;
      continue;
    }
    issues.push({ type: 'value_error', loc: ['body', ...problem.loc], msg: problem.msg });
  }
  return issues;
}

export function typedValues(next: TypedFields): FlagValues {
  return {
    valueType: next.value_type,
    variations: next.variations as FlagVariation[] | null,
    defaultVariation: next.default_variation,
    offVariation: next.off_variation,
    variationRules: next.variation_rules as VariationRule[] | null,
    variationSplit: next.variation_split as SplitEntry[] | null,
  };
}

export const sentTyped = (body: TypedBody) => (Object.keys(TYPED_COLUMNS) as Array<keyof TypedFields>).some((f) => body[f] !== undefined);
