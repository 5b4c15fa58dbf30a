import { createHash } from 'node:crypto';
import { BUCKETING } from '../../targeting/index.js';
import type { RulesetSnapshot } from '../feature-flags/ruleset.js';

export interface SdkRulesetBody {
  /** The JSON document, serialised once per snapshot. */
  json: string;
  /** Strong validator: a hash of exactly these bytes. */
  etag: string;
}

export type SdkService = ReturnType<typeof createSdkService>;

/**
 * The SDK ruleset is derived from the flags' compiled snapshot and serialised once per snapshot, so a download and
 * a revalidation (If-None-Match) cost no query and no serialisation until a flag or segment changes.
 */
export function createSdkService(deps: { snapshot(): Promise<RulesetSnapshot> }) {
  const bodies = new WeakMap<RulesetSnapshot, SdkRulesetBody>();

  function build(snapshot: RulesetSnapshot): SdkRulesetBody {
    const payload = {
      bucketing: { name: BUCKETING.name, version: BUCKETING.version },
      flags: snapshot.flags.map(({ row }) => ({
        id: row.id,
        key: row.key,
        status: row.status.toLowerCase(),
        is_active: row.status === 'ACTIVE',
        rollout_percentage: row.rolloutPercentage,
        targeting_rules: row.targetingRules ?? null,
        default_value: row.defaultValue,
      })),
      segments: [...snapshot.segments.values()]
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((s) => ({ id: s.id, kind: s.kind, status: s.status, rules: s.rules, valid: s.valid })),
    };
    const json = JSON.stringify(payload);
    return { json, etag: `"${createHash('sha256').update(json).digest('base64url')}"` };
  }

  return {
    async ruleset(): Promise<SdkRulesetBody> {
      const snapshot = await deps.snapshot();
      let body = bodies.get(snapshot);
      if (!body) bodies.set(snapshot, (body = build(snapshot)));
      return body;
    },
  };
}

/** If-None-Match matches when it lists this tag (weak comparison, as RFC 9110 prescribes for GET) or is `*`. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}
