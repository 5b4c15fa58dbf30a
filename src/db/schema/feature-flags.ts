import { sql } from 'drizzle-orm';
import { boolean, index, integer, json, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { FlagStatus } from '../../modules/feature-flags/domain.js';
import type { FlagValueType, FlagVariation, SplitEntry, VariationRule } from '../../targeting/index.js';
import { environments } from './environments.js';
import { users } from './users.js';

/**
 * Feature flags: what a flag is, shared by every environment (key, name, description, tags, value type, variations,
 * owner). Its serving state is held per environment in flag_environment_states.
 */
export const featureFlags = pgTable(
  'feature_flags',
  {
    id: uuid().primaryKey(),
    key: text().notNull(),
    name: text().notNull(),
    description: text(),
    defaultValue: boolean().notNull().default(false),
    valueType: text().$type<FlagValueType>().notNull().default('boolean'),
    variations: json().$type<FlagVariation[] | null>(),
    tags: jsonb().$type<string[] | null>(),
    ownerId: uuid().references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('feature_flags_key_key').on(t.key), index('feature_flags_created_at_idx').on(t.createdAt)],
);

/**
 * A flag's serving state in one environment. `is_active` on the wire is `status = 'ACTIVE'`, so the two can never
 * disagree. `targeting_rules` is `json` (kept as sent). Typed flags (value_type other than `boolean`) add the
 * variations served on and off, variation rules and a split (kept as sent). `segment_ids` mirrors the segments the
 * rules name (written with the rules), so "which flags use this segment" is an indexed lookup instead of a scan of
 * every rule document.
 */
export const flagEnvironmentStates = pgTable(
  'flag_environment_states',
  {
    flagId: uuid().notNull().references(() => featureFlags.id, { onDelete: 'cascade' }),
    environment: text().notNull().references(() => environments.key, { onDelete: 'cascade' }),
    status: text().$type<FlagStatus>().notNull().default('INACTIVE'),
    rolloutPercentage: integer().notNull().default(0),
    targetingRules: json().$type<unknown>(),
    segmentIds: text().array().notNull().default(sql`'{}'::text[]`),
    defaultVariation: text(),
    offVariation: text(),
    variationRules: json().$type<VariationRule[] | null>(),
    variationSplit: json().$type<SplitEntry[] | null>(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.flagId, t.environment] }),
    index('flag_environment_states_environment_idx').on(t.environment, t.flagId),
    index('flag_environment_states_segment_ids_idx').using('gin', t.segmentIds),
  ],
);

export type FlagSharedRow = typeof featureFlags.$inferSelect;
export type FlagStateRow = typeof flagEnvironmentStates.$inferSelect;
/** The state columns of one environment (without the keys). */
export type FlagState = Omit<FlagStateRow, 'flagId' | 'environment' | 'updatedAt'>;
/** A flag as one environment serves it: the shared fields with that environment's state. */
export type FeatureFlagRow = FlagSharedRow & FlagState & { environment: string };
