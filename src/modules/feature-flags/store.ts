import { and, arrayContains, asc, desc, eq, getTableColumns, ilike, inArray, or, sql, type SQL } from 'drizzle-orm';
import { queryRows, type Executor } from '../../db/client.js';
import { containsPattern } from '../../db/errors.js';
import { environments } from '../../db/schema/environments.js';
import {
  featureFlags,
  flagEnvironmentStates as states,
  type FeatureFlagRow,
  type FlagSharedRow,
  type FlagState,
  type FlagStateRow,
} from '../../db/schema/feature-flags.js';
import type { FlagStatus } from './domain.js';
import { afterCursor, inPeriod, storedText, STREAM_PAGE_SIZE, type CreatedPeriod, type Cursor } from '../../db/paging.js';

/** The state columns of one environment, by stored name (what a change may write besides the shared fields). */
const STATE_FIELDS = ['status', 'rolloutPercentage', 'targetingRules', 'segmentIds', 'defaultVariation', 'offVariation', 'variationRules', 'variationSplit'] as const;
const STATE_SET = new Set<string>(STATE_FIELDS);

/** A flag as one environment serves it: the shared columns with that environment's state. */
const flagColumns = {
  ...getTableColumns(featureFlags),
  environment: states.environment,
  status: states.status,
  rolloutPercentage: states.rolloutPercentage,
  targetingRules: states.targetingRules,
  segmentIds: states.segmentIds,
  defaultVariation: states.defaultVariation,
  offVariation: states.offVariation,
  variationRules: states.variationRules,
  variationSplit: states.variationSplit,
};
const inEnvironment = (environment: string) => and(eq(states.flagId, featureFlags.id), eq(states.environment, environment));
const selectFlags = (db: Executor, environment: string) =>
  db.select(flagColumns).from(featureFlags).innerJoin(states, inEnvironment(environment));

export type FlagValuesByColumn = Partial<Omit<FeatureFlagRow, 'id' | 'environment'>>;

function split(values: FlagValuesByColumn): { shared: Partial<FlagSharedRow>; state: Partial<FlagState> } {
  const shared: Record<string, unknown> = {};
  const state: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(values)) (STATE_SET.has(field) ? state : shared)[field] = value;
  return { shared, state };
}

/** The state part of a row (what another environment may be given of it). */
export function stateOf(row: FlagState): FlagState {
  return Object.fromEntries(STATE_FIELDS.map((f) => [f, row[f]])) as unknown as FlagState;
}

/** A new flag: its shared row and one state per environment, answered as `environment` serves it. */
export async function insertFlag(
  db: Executor,
  shared: typeof featureFlags.$inferInsert,
  stateByEnvironment: Map<string, FlagState>,
  environment: string,
): Promise<FeatureFlagRow> {
  await db.insert(featureFlags).values(shared);
  await db.insert(states).values([...stateByEnvironment].map(([env, state]) => ({ ...state, flagId: shared.id, environment: env, updatedAt: shared.updatedAt })));
  return (await findFlag(db, shared.id, environment))!;
}

export async function findFlag(db: Executor, id: string, environment: string): Promise<FeatureFlagRow | undefined> {
  const [row] = await selectFlags(db, environment).where(eq(featureFlags.id, id));
  return row;
}

/**
 * Row lock on the flag's shared row: concurrent changes of one flag, in any environment, take turns, so each audit
 * entry's "before" is what it replaced.
 */
export async function findFlagForUpdate(db: Executor, id: string, environment: string): Promise<FeatureFlagRow | undefined> {
  const [locked] = await db.select({ id: featureFlags.id }).from(featureFlags).where(eq(featureFlags.id, id)).for('update');
  return locked && findFlag(db, id, environment);
}

/** Writes the shared fields on the flag and the state fields on its state in `environment`. */
export async function updateFlag(db: Executor, id: string, environment: string, values: FlagValuesByColumn): Promise<FeatureFlagRow> {
  const { shared, state } = split(values);
  if (Object.keys(shared).length > 0) await db.update(featureFlags).set(shared).where(eq(featureFlags.id, id));
  if (Object.keys(state).length > 0) {
    await db.update(states).set({ ...state, ...(shared.updatedAt ? { updatedAt: shared.updatedAt } : {}) }).where(and(eq(states.flagId, id), eq(states.environment, environment)));
  }
  return (await findFlag(db, id, environment))!;
}

export async function deleteFlag(db: Executor, id: string): Promise<void> {
  await db.delete(featureFlags).where(eq(featureFlags.id, id));
}

export async function listFlags(
  db: Executor,
  environment: string,
  opts: { status?: FlagStatus; search?: string; skip: number; limit: number },
): Promise<{ rows: FeatureFlagRow[]; total: number }> {
  const filters: SQL[] = [];
  if (opts.status) filters.push(eq(states.status, opts.status));
  if (opts.search) {
    const pattern = containsPattern(opts.search);
    filters.push(or(ilike(featureFlags.name, pattern), ilike(featureFlags.key, pattern))!);
  }
  const where = filters.length ? and(...filters) : undefined;
  const rows = await selectFlags(db, environment)
    .where(where)
    .orderBy(desc(featureFlags.createdAt), desc(featureFlags.id))
    .offset(opts.skip)
    .limit(opts.limit);
  const [{ count }] = await db.select({ count: sql<number>`count(*)::int` }).from(featureFlags).innerJoin(states, inEnvironment(environment)).where(where);
  return { rows, total: count };
}

/** Every flag as one environment serves it, for that environment's compiled ruleset (one query per rebuild). */
export function allFlags(db: Executor, environment: string): Promise<FeatureFlagRow[]> {
  return selectFlags(db, environment).orderBy(featureFlags.key);
}

/** Every state of these flags, in every environment (the flag view's `environments`). */
export function statesOf(db: Executor, flagIds: string[]): Promise<FlagStateRow[]> {
  if (flagIds.length === 0) return Promise.resolve([]);
  return db.select().from(states).where(inArray(states.flagId, flagIds));
}

/** Flags whose rules name the segment in any environment (GIN index on segment_ids), with the default's status. */
export function flagsNamingSegment(db: Executor, segmentId: string) {
  const naming = db.select({ flagId: states.flagId }).from(states).where(arrayContains(states.segmentIds, [segmentId]));
  return db
    .select({ id: featureFlags.id, key: featureFlags.key, name: featureFlags.name, status: states.status })
    .from(featureFlags)
    .innerJoin(states, eq(states.flagId, featureFlags.id))
    .innerJoin(environments, and(eq(environments.key, states.environment), eq(environments.isDefault, true)))
    .where(inArray(featureFlags.id, naming))
    .orderBy(featureFlags.key);
}

/**
 * A new environment's state of every flag: copied from `copyFrom`, or off (status INACTIVE, rollout 0, no rules)
 * keeping the default environment's serving variations so a typed flag's state stays complete. Returns the count.
 */
export async function seedEnvironment(db: Executor, environment: string, copyFrom: string | undefined): Promise<number> {
  const rows = copyFrom !== undefined
    ? await queryRows<{ flag_id: string }>(db, sql`
        INSERT INTO flag_environment_states (flag_id, environment, status, rollout_percentage, targeting_rules, segment_ids,
          default_variation, off_variation, variation_rules, variation_split, updated_at)
        SELECT flag_id, ${environment}, status, rollout_percentage, targeting_rules, segment_ids,
          default_variation, off_variation, variation_rules, variation_split, now()
        FROM flag_environment_states WHERE environment = ${copyFrom}
        RETURNING flag_id`)
    : await queryRows<{ flag_id: string }>(db, sql`
        INSERT INTO flag_environment_states (flag_id, environment, status, rollout_percentage, targeting_rules, segment_ids,
          default_variation, off_variation, variation_rules, variation_split, updated_at)
        SELECT s.flag_id, ${environment}, CASE WHEN s.status = 'ARCHIVED' THEN 'ARCHIVED' ELSE 'INACTIVE' END, 0, NULL, '{}'::text[],
          s.default_variation, s.off_variation, NULL, s.variation_split, now()
        FROM flag_environment_states s JOIN environments e ON e.key = s.environment AND e.is_default
        RETURNING flag_id`);
  return rows.length;
}

/** Read model for export: one page of flags created in the period, in (created_at, id) order, times as stored. */
export function exportPage(db: Executor, environment: string, period: CreatedPeriod, cursor?: Cursor) {
  return db
    .select({
      id: featureFlags.id,
      key: featureFlags.key,
      name: featureFlags.name,
      status: states.status,
      rolloutPercentage: states.rolloutPercentage,
      valueType: featureFlags.valueType,
      variations: featureFlags.variations,
      defaultVariation: states.defaultVariation,
      offVariation: states.offVariation,
      variationRules: states.variationRules,
      variationSplit: states.variationSplit,
      createdAt: storedText(featureFlags.createdAt),
      updatedAt: storedText(featureFlags.updatedAt),
    })
    .from(featureFlags)
    .innerJoin(states, inEnvironment(environment))
    .where(and(inPeriod(featureFlags.createdAt, period), afterCursor(featureFlags.createdAt, featureFlags.id, cursor)))
    .orderBy(asc(featureFlags.createdAt), asc(featureFlags.id))
    .limit(STREAM_PAGE_SIZE);
}

/** Spec export rule 4: flags created in the period, and how many of them are active (in the default environment). */
export async function periodSummary(db: Executor, environment: string, period: CreatedPeriod) {
  const [row] = await db
    .select({ total: sql<number>`count(*)::int`, active: sql<number>`count(*) FILTER (WHERE ${states.status} = 'ACTIVE')::int` })
    .from(featureFlags)
    .innerJoin(states, inEnvironment(environment))
    .where(inPeriod(featureFlags.createdAt, period));
  return row;
}
