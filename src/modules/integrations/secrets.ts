import { hkdfSync } from 'node:crypto';
export { createSecretBox, type SecretBox } from '../../platform/secret-box.js';

/** Integration secrets are sealed by platform/secret-box.ts with the integration type as associated data. */
const HKDF_SALT = 'uplift';
const HKDF_INFO = 'integrations-secrets-v1';

/** INTEGRATIONS_ENCRYPTION_KEY when set; otherwise HKDF-SHA256 of SECRET_KEY, so a deployment needs no new setting. */
export function integrationsKey(configured: Buffer | undefined, secretKey: string): Buffer {
  return configured ?? Buffer.from(hkdfSync('sha256', secretKey, HKDF_SALT, HKDF_INFO, 32));
}

