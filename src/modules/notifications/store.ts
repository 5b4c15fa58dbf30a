import { and, count, desc, eq, or, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import {
  notificationDeliveries,
  notificationPreferences,
  type NotificationDeliveryRow,
  type NotificationPreferencesRow,
} from '../../db/schema/notifications.js';

export async function findPreferences(db: Executor, userId: string, forUpdate = false): Promise<NotificationPreferencesRow | undefined> {
  const query = db.select().from(notificationPreferences).where(eq(notificationPreferences.userId, userId));
  const [row] = forUpdate ? await query.for('update') : await query;
  return row;
}

export async function upsertPreferences(db: Executor, values: typeof notificationPreferences.$inferInsert): Promise<NotificationPreferencesRow> {
  const { userId: _userId, createdAt: _createdAt, ...changes } = values;
  const [row] = await db
    .insert(notificationPreferences)
    .values(values)
    .onConflictDoUpdate({ target: notificationPreferences.userId, set: changes })
    .returning();
  return row;
}

export async function listPreferences(db: Executor, skip: number, limit: number) {
  const rows = await db
    .select()
    .from(notificationPreferences)
    .orderBy(desc(notificationPreferences.updatedAt), desc(notificationPreferences.userId))
    .offset(skip)
    .limit(limit);
  const [{ total }] = await db.select({ total: count() }).from(notificationPreferences);
  return { rows, total };
}

/** Preferences subscribed to `kind` with at least one channel on. */
export function subscribersOf(db: Executor, kind: string): Promise<NotificationPreferencesRow[]> {
  return db
    .select()
    .from(notificationPreferences)
    .where(
      and(
        sql`${notificationPreferences.events} @> ${JSON.stringify([kind])}::jsonb`,
        or(eq(notificationPreferences.emailEnabled, true), eq(notificationPreferences.chatWebhookEnabled, true)),
      ),
    );
}

export async function insertDelivery(db: Executor, values: typeof notificationDeliveries.$inferInsert): Promise<void> {
  await db.insert(notificationDeliveries).values(values);
}

export interface DeliveryFilter {
  userId?: string;
  status?: string;
  channel?: string;
  kind?: string;
  notificationId?: string;
}

export async function listDeliveries(db: Executor, filter: DeliveryFilter, skip: number, limit: number) {
  const where = and(
    filter.userId ? eq(notificationDeliveries.userId, filter.userId) : undefined,
    filter.status ? eq(notificationDeliveries.status, filter.status) : undefined,
    filter.channel ? eq(notificationDeliveries.channel, filter.channel) : undefined,
    filter.kind ? eq(notificationDeliveries.kind, filter.kind) : undefined,
    filter.notificationId ? eq(notificationDeliveries.notificationId, filter.notificationId) : undefined,
  );
  const rows: NotificationDeliveryRow[] = await db
    .select()
    .from(notificationDeliveries)
    .where(where)
    .orderBy(desc(notificationDeliveries.createdAt), desc(notificationDeliveries.attempt), desc(notificationDeliveries.id))
    .offset(skip)
    .limit(limit);
  const [{ total }] = await db.select({ total: count() }).from(notificationDeliveries).where(where);
  return { rows, total };
}

/** Test emails sent for an account since `since` (first attempts only: a retry is the same message). */
export async function countTestEmailsSince(db: Executor, userId: string, since: Date): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(notificationDeliveries)
    .where(
      and(
        eq(notificationDeliveries.userId, userId),
        eq(notificationDeliveries.kind, 'test'),
        eq(notificationDeliveries.channel, 'email'),
        eq(notificationDeliveries.attempt, 1),
        sql`${notificationDeliveries.createdAt} > ${since.toISOString()}::timestamptz`,
      ),
    );
  return Number(row?.n ?? 0);
}
