import type { Executor } from '../../db/client.js';
import { countInEnvironment } from './store.js';

/** What other modules read of API keys without the service (the environments module, which the service needs). */
export const apiKeysReadModel = {
  /** How many keys belong to the environment, read in the caller's transaction. */
  keysInEnvironment: (tx: Executor, environment: string): Promise<number> => countInEnvironment(tx, environment),
};
