/** The api-keys module's vocabulary other modules share. */
/** Bus channel: an API key was deleted (its id); the key cache and the SDK and OFREP streams listen. */
export const KEYS_CHANGED = 'api-keys.changed';
