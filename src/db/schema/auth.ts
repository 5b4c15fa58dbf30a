import { bigserial, index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Failed sign-in attempts per lower-cased email, for the lockout rule (shared by every API process). */
export const loginFailures = pgTable(
  'login_failures',
  {
    id: bigserial({ mode: 'number' }).primaryKey(),
    emailKey: text().notNull(),
    failedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('login_failures_email_idx').on(t.emailKey, t.failedAt)],
);
