import { sql } from 'drizzle-orm';
import { boolean, check, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

export const INTEGRATION_TYPES = ['jira', 'salesforce', 'github'] as const;
export type IntegrationType = (typeof INTEGRATION_TYPES)[number];

/**
 * One row per integration type. Non-secret configuration keys are stored as they are; every other key's value
 * lives only in `encrypted_secrets` (AES-256-GCM), and `secret_names` lists those keys so reads never decrypt.
 */
export const integrations = pgTable(
  'integrations',
  {
    id: uuid().primaryKey(),
    integrationType: text().$type<IntegrationType>().notNull(),
    isActive: boolean().notNull().default(false),
    publicConfig: jsonb().$type<Record<string, string>>().notNull().default({}),
    secretNames: jsonb().$type<string[]>().notNull().default([]),
    encryptedSecrets: text(),
    lastSyncAt: timestamp({ withTimezone: true }),
    lastError: text(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('integrations_type_key').on(t.integrationType),
    check('integrations_type_check', sql`${t.integrationType} IN ('jira', 'salesforce', 'github')`),
  ],
);
export type IntegrationRow = typeof integrations.$inferSelect;
