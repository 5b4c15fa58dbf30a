/** The feature flags module's domain vocabulary: the table (db/schema/feature-flags.ts) and other modules import it from here. */
export const FLAG_STATUSES = ['ACTIVE', 'INACTIVE', 'ARCHIVED'] as const;
export type FlagStatus = (typeof FLAG_STATUSES)[number];

/** Bus channel: a flag changed (its id); the compiled ruleset and the SDK and OFREP streams listen. */
export const FLAGS_CHANGED = 'flags.changed';
