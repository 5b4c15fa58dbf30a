/** The users module's vocabulary other modules share. */
/** Bus channel: an account changed (its id); API-key cache, SDK and OFREP streams, audit stream listen. */
export const ACCOUNTS_CHANGED = 'accounts.changed';
