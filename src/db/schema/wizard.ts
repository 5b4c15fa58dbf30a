import { index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { experiments } from './experiments.js';
import { users } from './users.js';

export const WIZARD_DRAFT_STATUSES = ['draft', 'submitted'] as const;
export type WizardDraftStatus = (typeof WIZARD_DRAFT_STATUSES)[number];

/** A user's experiment in the making: step data in the experiment request's own (snake_case) shape. */
export const wizardDrafts = pgTable(
  'wizard_drafts',
  {
    id: uuid().primaryKey(),
    userId: uuid().notNull().references(() => users.id, { onDelete: 'cascade' }),
    currentStep: integer().notNull().default(1),
    data: jsonb().$type<Record<string, unknown>>().notNull().default({}),
    status: text().$type<WizardDraftStatus>().notNull().default('draft'),
    experimentId: uuid().references(() => experiments.id, { onDelete: 'set null' }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('wizard_drafts_user_idx').on(t.userId, t.updatedAt)],
);

export type WizardDraftRow = typeof wizardDrafts.$inferSelect;
