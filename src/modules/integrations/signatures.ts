import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/**
 * Code host deliveries: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body keyed with webhook_secret>`.
 * The digests are compared in constant time; a header of the wrong shape fails before any comparison (its shape
 * says nothing about the secret).
 */
export function hubSignatureMatches(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  const match = header ? SIGNATURE.exec(header.trim()) : null;
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(match[1], 'hex'));
}

/**
 * Tracker and CRM deliveries carry the shared secret itself (`X-Webhook-Secret`). Both sides are hashed first so
 * the constant-time compare always sees equal lengths and the secret's length does not leak either.
 */
export function sharedSecretMatches(secret: string, provided: string | undefined): boolean {
  if (provided === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(secret), digest(provided));
}
