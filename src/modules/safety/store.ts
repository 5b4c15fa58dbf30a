import { asc, eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { safetyFlagConfigs, safetySettings, type SafetyFlagConfigRow, type SafetySettingsRow } from '../../db/schema/safety.js';

const SETTINGS_ID = 1;

export async function findSettings(db: Executor): Promise<SafetySettingsRow | undefined> {
  const [row] = await db.select().from(safetySettings).where(eq(safetySettings.id, SETTINGS_ID));
  return row;
}

/** The settings row, created from `initial` when absent, locked until the transaction ends. */
export async function lockSettings(db: Executor, initial: Omit<SafetySettingsRow, 'id'>): Promise<SafetySettingsRow> {
  await db.insert(safetySettings).values({ id: SETTINGS_ID, ...initial }).onConflictDoNothing();
  const [row] = await db.select().from(safetySettings).where(eq(safetySettings.id, SETTINGS_ID)).for('update');
  return row;
}

export async function updateSettings(db: Executor, values: Partial<typeof safetySettings.$inferInsert>): Promise<SafetySettingsRow> {
  const [row] = await db.update(safetySettings).set(values).where(eq(safetySettings.id, SETTINGS_ID)).returning();
  return row;
}

export async function findConfig(db: Executor, flagId: string): Promise<SafetyFlagConfigRow | undefined> {
  const [row] = await db.select().from(safetyFlagConfigs).where(eq(safetyFlagConfigs.flagId, flagId));
  return row;
}

/** Creates the flag's config with these values when it has none; returns whether it did. */
export async function insertConfigIfAbsent(db: Executor, values: typeof safetyFlagConfigs.$inferInsert): Promise<boolean> {
  const inserted = await db.insert(safetyFlagConfigs).values(values).onConflictDoNothing().returning({ flagId: safetyFlagConfigs.flagId });
  return inserted.length > 0;
}

export async function lockConfig(db: Executor, flagId: string): Promise<SafetyFlagConfigRow | undefined> {
  const [row] = await db.select().from(safetyFlagConfigs).where(eq(safetyFlagConfigs.flagId, flagId)).for('update');
  return row;
}

export async function updateConfig(db: Executor, flagId: string, values: Partial<typeof safetyFlagConfigs.$inferInsert>): Promise<SafetyFlagConfigRow> {
  const [row] = await db.update(safetyFlagConfigs).set(values).where(eq(safetyFlagConfigs.flagId, flagId)).returning();
  return row;
}

export function enabledConfigs(db: Executor): Promise<SafetyFlagConfigRow[]> {
  return db.select().from(safetyFlagConfigs).where(eq(safetyFlagConfigs.enabled, true)).orderBy(asc(safetyFlagConfigs.flagId));
}
