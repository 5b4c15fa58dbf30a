import { createHash } from 'node:crypto';
import type { Bus } from '../../platform/bus.js';
import { BUCKETING, SPLIT_BUCKETING } from '../../targeting/index.js';
import type { RulesetSnapshot } from '../feature-flags/service.js';
import { changedEnvironment, FLAGS_CHANGED } from '../feature-flags/domain.js';
import { SEGMENTS_CHANGED } from '../segments/service.js';
import { ENVIRONMENTS_CHANGED } from '../environments/service.js';

export interface SdkRulesetBody {
  /** The JSON document, serialised once per snapshot. */
  json: string;
  /** Strong validator: a hash of exactly these bytes. */
  etag: string;
}

export type SdkService = ReturnType<typeof createSdkService>;

/**
 * The SDK ruleset is derived from the flags' compiled snapshot and serialised once per snapshot, so a download and
 * a revalidation (If-None-Match) cost no query and no serialisation until a flag or segment changes. Each environment
 * has its own snapshot, so its own ruleset, version and streams: a change in one wakes only that environment's.
 */
export function createSdkService(deps: { snapshot(environment?: string): Promise<RulesetSnapshot>; bus: Bus }) {
  const bodies = new WeakMap<RulesetSnapshot, SdkRulesetBody>();
  /** The streams of each environment (key: the environment; '' for callers naming none, the default's). */
  const watchersByEnvironment = new Map<string, Set<(body: SdkRulesetBody) => void>>();
  const changesByEnvironment = new Map<string, number>();

  /**
   * A flag or segment change committed in any process (the bus delivers it everywhere): the ruleset is rebuilt once
   * for every stream of this process. Deferred by a microtask so that the flags service, also listening, has
   * invalidated its snapshot first whatever the order of subscription. Only the latest change's rebuild is handed
   * out, so a slow earlier rebuild never overtakes a later one.
   */
  function changedIn(environment: string): void {
    const watchers = watchersByEnvironment.get(environment);
    if (!watchers || watchers.size === 0) return;
    const change = (changesByEnvironment.get(environment) ?? 0) + 1;
    changesByEnvironment.set(environment, change);
    queueMicrotask(() => {
      ruleset(environment || undefined).then(
        (body) => {
          if (change !== changesByEnvironment.get(environment)) return;
          for (const watcher of watchers) watcher(body);
        },
        // The streams' heartbeats revalidate the ruleset, so a failed rebuild is retried there.
        () => undefined,
      );
    });
  }
  /** A change in one environment (null: every environment, e.g. a segment or a shared field). */
  function changed(environment: string | null): void {
    if (environment !== null) {
      changedIn(environment);
      // Streams opened without naming an environment follow the default, which may be this one.
      changedIn('');
      return;
    }
    for (const key of watchersByEnvironment.keys()) changedIn(key);
  }
  deps.bus.subscribe(FLAGS_CHANGED, (message) => changed(changedEnvironment(message)));
  deps.bus.subscribe(SEGMENTS_CHANGED, () => changed(null));
  // A new default environment: the streams that follow the default get its ruleset.
  deps.bus.subscribe(ENVIRONMENTS_CHANGED, () => changed(null));

  function build(snapshot: RulesetSnapshot): SdkRulesetBody {
    const payload = {
      bucketing: { name: BUCKETING.name, version: BUCKETING.version },
      split_bucketing: { name: SPLIT_BUCKETING.name, version: SPLIT_BUCKETING.version },
      flags: snapshot.flags.map(({ wire }) => wire),
      segments: [...snapshot.segments.values()]
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((s) => ({ id: s.id, kind: s.kind, status: s.status, rules: s.rules, valid: s.valid })),
    };
    const json = JSON.stringify(payload);
    return { json, etag: `"${createHash('sha256').update(json).digest('base64url')}"` };
  }

  async function ruleset(environment?: string): Promise<SdkRulesetBody> {
    const snapshot = await deps.snapshot(environment);
    let body = bodies.get(snapshot);
    if (!body) bodies.set(snapshot, (body = build(snapshot)));
    return body;
  }

  return {
    ruleset,
    /**
     * Calls `watcher` with the environment's ruleset after each flag or segment change there (possibly unchanged);
     * returns the stop function. Without an environment: the default environment's.
     */
    watch(watcher: (body: SdkRulesetBody) => void, environment?: string): () => void {
      const key = environment ?? '';
      let watchers = watchersByEnvironment.get(key);
      if (!watchers) watchersByEnvironment.set(key, (watchers = new Set()));
      watchers.add(watcher);
      return () => {
        watchers.delete(watcher);
        if (watchers.size === 0 && watchersByEnvironment.get(key) === watchers) watchersByEnvironment.delete(key);
      };
    },
  };
}

/** The ruleset's version as stream event ids carry it: the ETag's value, without quotes. */
export function versionOf(body: SdkRulesetBody): string {
  return body.etag.slice(1, -1);
}

/** If-None-Match matches when it lists this tag (weak comparison, as RFC 9110 prescribes for GET) or is `*`. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}
