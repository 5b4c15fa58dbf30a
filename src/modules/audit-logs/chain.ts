import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../../platform/canonical-json.js';

/**
 * The signed audit chain. Every committed audit entry is sealed once, in commit order, with a sequence number and
 *
 *   signature = hex( HMAC-SHA256( COMPLIANCE_HMAC_KEY, canonical form ) )
 *
 * The canonical form is the JSON text of this object, with the keys of every object (nested ones included) sorted
 * by UTF-16 code unit order, arrays kept in order, no whitespace, strings and numbers as JSON.stringify writes them:
 *
 *   { action, actor_id, actor_username, after, before, created_at, details, entity_id, entity_type, id,
 *     previous_signature, sequence }
 *
 * created_at is ISO 8601 UTC with milliseconds (2024-01-31T12:00:00.000Z); absent values are null; the first
 * entry's previous_signature is null. Because each signature covers the previous one, editing, reordering or
 * deleting a sealed entry breaks its own signature or the next entry's link; only someone holding the key can
 * re-sign. Truncating the newest entries is detectable only against a sequence number recorded elsewhere.
 */
export interface ChainEntry {
  sequence: number;
  id: string;
  createdAt: Date;
  actorId: string | null;
  actorUsername: string | null;
  action: string;
  entityType: string;
  entityId: string | null;
  before: unknown;
  after: unknown;
  details: unknown;
  previousSignature: string | null;
}

export function canonicalForm(entry: ChainEntry): string {
  return canonicalJson({
    action: entry.action,
    actor_id: entry.actorId,
    actor_username: entry.actorUsername,
    after: entry.after ?? null,
    before: entry.before ?? null,
    created_at: entry.createdAt.toISOString(),
    details: entry.details ?? null,
    entity_id: entry.entityId,
    entity_type: entry.entityType,
    id: entry.id,
    previous_signature: entry.previousSignature,
    sequence: entry.sequence,
  });
}

export function signEntry(key: string, entry: ChainEntry): string {
  return createHmac('sha256', key).update(canonicalForm(entry), 'utf8').digest('hex');
}

/**
 * Whether a sealed entry is intact: its stored signature matches its content and its previous_signature is the
 * signature actually stored at sequence - 1 (`predecessorSignature`: null for the first entry, undefined when a later
 * entry's predecessor seal is missing).
 */
export function isIntact(key: string, entry: ChainEntry, signature: string, predecessorSignature: string | null | undefined): boolean {
  const expected = Buffer.from(signEntry(key, entry), 'hex');
  const stored = Buffer.from(signature, 'hex');
  const contentMatches = expected.length === stored.length && timingSafeEqual(expected, stored);
  return contentMatches && predecessorSignature !== undefined && predecessorSignature === entry.previousSignature;
}
