import { doublePrecision, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Outputs of an LLM experiment's variants and their automatic evaluation. experiment_id names an experiment. */
export const llmOutputs = pgTable(
  'llm_outputs',
  {
    id: uuid().primaryKey(),
    experimentId: uuid().notNull(),
    variantName: text().notNull(),
    prompt: text(),
    output: text().notNull(),
    autoEvalScore: doublePrecision(),
    autoEvalError: text(),
    autoEvalReasoning: text(),
    judgedAt: timestamp({ withTimezone: true }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('llm_outputs_experiment_idx').on(t.experimentId, t.variantName)],
);
export type LlmOutputRow = typeof llmOutputs.$inferSelect;
