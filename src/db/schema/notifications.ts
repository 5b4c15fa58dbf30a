import { boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './users.js';

/** Notification preferences per account and the log of every delivery attempt. */
export const notificationPreferences = pgTable('notification_preferences', {
  userId: uuid()
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  emailEnabled: boolean().notNull().default(false),
  /** null sends to the account's email address. */
  emailAddress: text(),
  chatWebhookEnabled: boolean().notNull().default(false),
  chatWebhookUrl: text(),
  events: jsonb().$type<string[]>().notNull().default([]),
  createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
});
export type NotificationPreferencesRow = typeof notificationPreferences.$inferSelect;

/** Every delivery attempt with its outcome. user_id has no foreign key: the log outlives accounts. */
export const notificationDeliveries = pgTable(
  'notification_deliveries',
  {
    id: uuid().primaryKey(),
    notificationId: uuid().notNull(),
    userId: uuid(),
    kind: text().notNull(),
    channel: text().notNull(),
    target: text().notNull(),
    attempt: integer().notNull(),
    status: text().notNull(),
    error: text(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('notification_deliveries_created_at_idx').on(t.createdAt), index('notification_deliveries_user_idx').on(t.userId, t.createdAt)],
);
export type NotificationDeliveryRow = typeof notificationDeliveries.$inferSelect;
