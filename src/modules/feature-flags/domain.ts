/** The feature flags module's domain vocabulary: the table (db/schema/feature-flags.ts) and other modules import it from here. */
export const FLAG_STATUSES = ['ACTIVE', 'INACTIVE', 'ARCHIVED'] as const;
export type FlagStatus = (typeof FLAG_STATUSES)[number];

/**
 * Bus channel: a flag changed, announced after every flag write with `flagsChangedMessage`. The compiled ruleset of
 * the environment written, in every process, drops what it holds (no environment: every environment's); the SDK and
 * OFREP streams of that environment listen.
 */
export const FLAGS_CHANGED = 'flags.changed';

export interface FlagsChanged {
  /** The environment whose state changed; null: a shared field, so every environment. */
  environment: string | null;
  flag: string;
}
export const flagsChangedMessage = (change: FlagsChanged): string => JSON.stringify(change);
/** The environment a FLAGS_CHANGED message names (null: every environment). */
export function changedEnvironment(message: string): string | null {
  try {
    const parsed = JSON.parse(message) as Partial<FlagsChanged>;
    return typeof parsed.environment === 'string' ? parsed.environment : null;
  } catch {
    return null;
  }
}
