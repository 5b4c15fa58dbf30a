import { and, desc, eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { wizardDrafts, type WizardDraftRow } from '../../db/schema/wizard.js';

export async function insertDraft(db: Executor, values: typeof wizardDrafts.$inferInsert): Promise<WizardDraftRow> {
  const [row] = await db.insert(wizardDrafts).values(values).returning();
  return row;
}

/** A draft of this user (drafts are personal: another user's draft is not found). */
export async function lockOwnDraft(db: Executor, id: string, userId: string): Promise<WizardDraftRow | undefined> {
  const [row] = await db
    .select()
    .from(wizardDrafts)
    .where(and(eq(wizardDrafts.id, id), eq(wizardDrafts.userId, userId)))
    .for('update');
  return row;
}

export async function findOwnDraft(db: Executor, id: string, userId: string): Promise<WizardDraftRow | undefined> {
  const [row] = await db.select().from(wizardDrafts).where(and(eq(wizardDrafts.id, id), eq(wizardDrafts.userId, userId)));
  return row;
}

export function listOwnDrafts(db: Executor, userId: string): Promise<WizardDraftRow[]> {
  return db
    .select()
    .from(wizardDrafts)
    .where(eq(wizardDrafts.userId, userId))
    .orderBy(desc(wizardDrafts.updatedAt), desc(wizardDrafts.id));
}

export async function updateDraft(db: Executor, id: string, values: Partial<typeof wizardDrafts.$inferInsert>): Promise<WizardDraftRow> {
  const [row] = await db.update(wizardDrafts).set(values).where(eq(wizardDrafts.id, id)).returning();
  return row;
}
