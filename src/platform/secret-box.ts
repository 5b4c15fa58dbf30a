import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets at rest: AES-256-GCM, a fresh 96-bit nonce per write, caller-chosen associated data (a ciphertext copied
 * onto another row does not open). Stored as `v1.<nonce>.<tag>.<data>` in base64url; the version leaves room for
 * another scheme without guessing. Used by integrations and warehouse connections.
 */
const VERSION = 'v1';

export interface SecretBox {
  seal(values: Record<string, string>, associatedData: string): string;
  /** The stored values, or undefined when the text was not sealed with this key for this associated data. */
  open(sealed: string, associatedData: string): Record<string, string> | undefined;
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('An AES-256 key has 32 bytes');
  return {
    seal(values, associatedData) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(associatedData, 'utf8'));
      const data = Buffer.concat([cipher.update(JSON.stringify(values), 'utf8'), cipher.final()]);
      return [VERSION, nonce, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
    },
    open(sealed, associatedData) {
      const [version, nonce, tag, data] = sealed.split('.');
      if (version !== VERSION || data === undefined) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'), { authTagLength: 16 });
        decipher.setAAD(Buffer.from(associatedData, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        const text = Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
        return JSON.parse(text) as Record<string, string>;
      } catch {
        return undefined;
      }
    },
  };
}
