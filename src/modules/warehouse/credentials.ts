import { createSecretBox } from '../../platform/secret-box.js';
import type { Credentials } from './connectors/types.js';

/**
 * Connection credentials under WAREHOUSE_CREDENTIALS_KEYS: sealed with the newest key, opened with any of them (so
 * keys rotate without re-encrypting), the connection id as associated data (a ciphertext copied onto another
 * connection does not open).
 */
export interface Keyring {
  seal(credentials: Credentials, connectionId: string): string;
  /** undefined when no configured key opens it. */
  open(sealed: string, connectionId: string): Credentials | undefined;
}

export function createKeyring(keys: Buffer[]): Keyring {
  const boxes = keys.map(createSecretBox);
  return {
    seal: (credentials, connectionId) => boxes[0].seal(credentials, connectionId),
    open(sealed, connectionId) {
      for (const box of boxes) {
        const opened = box.open(sealed, connectionId);
        if (opened) return opened;
      }
      return undefined;
    },
  };
}
