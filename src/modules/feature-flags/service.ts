import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/client.js';
import type { FeatureFlagRow, FlagState, FlagStateRow } from '../../db/schema/feature-flags.js';
import type { FlagStatus } from './domain.js';
import type { AuditActor, AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { BadRequest, Conflict, DomainError, NotFound, Unprocessable, type Loc } from '../../platform/errors.js';
import { collectSegmentIds, isRuleSetShape, RULE_MESSAGES, validateRuleSet, type TypedFields } from '../../targeting/index.js';
import {
  AUDITED_FIELDS,
  mergeTyped,
  sentTyped,
  snapshotOf,
  STATE_AUDITED,
  toFlagView,
  typedFieldsOf,
  typedProblems,
  typedValues,
  type FlagValues,
  type TypedBody,
} from './fields.js';
// The wire views, for the modules that show flags (export).
export { toFlagView, toStateView, typedFieldsOf } from './fields.js';
import type { AuditLogsService } from '../audit-logs/service.js';
import { SEGMENT_NOT_USABLE, SEGMENTS_CHANGED, type SegmentsService } from '../segments/service.js';
import { createRulesetCache, loadRuleset } from './ruleset.js';
// The compiled ruleset as the SDK and OFREP modules serve it.
export { membershipSubject, type CompiledFlag, type RulesetSnapshot } from './ruleset.js';
import type { BulkAction, BulkToggleResult, FlagCreate, FlagListQuery, FlagUpdate, FlagView, HistoryEntry } from './schemas.js';
import { ENVIRONMENTS_CHANGED, type EnvironmentsService } from '../environments/service.js';
import { createFlagEvaluation } from './evaluation.js';
export type { FlagDetails } from './evaluation.js';
import * as store from './store.js';
import type { CreatedPeriod, Cursor } from '../../db/paging.js';
import { isUniqueViolation } from '../../db/errors.js';

export const FLAG_NOT_FOUND = 'Feature flag not found';
export const FLAG_KEY_TAKEN = 'A feature flag with this key already exists';
export const ARCHIVED_CANNOT_TURN_ON = 'This flag is archived. Unarchive it before turning it on.';

import { changedEnvironment, FLAGS_CHANGED, flagsChangedMessage } from './domain.js';
export { changedEnvironment, FLAGS_CHANGED, flagsChangedMessage, type FlagsChanged } from './domain.js';
export const QUERY_ENVIRONMENT: Loc = ['query', 'environment'];
/** Safety net for a lost cross-process invalidation; writes in this process invalidate at once. */
const RULESET_MAX_AGE_MS = 30_000;

type Transition = 'activate' | 'deactivate' | 'toggle' | 'archive' | 'unarchive';
const REFUSED = 'refused' as const;

/**
 * Spec, "Feature flag status". Turning an archived flag on is refused with ARCHIVED_CANNOT_TURN_ON; turning it off
 * leaves it archived; only unarchive leaves ARCHIVED (to INACTIVE, not on).
 */
const TRANSITIONS: Record<Transition, Record<FlagStatus, FlagStatus | typeof REFUSED>> = {
  activate: { ACTIVE: 'ACTIVE', INACTIVE: 'ACTIVE', ARCHIVED: REFUSED },
  deactivate: { ACTIVE: 'INACTIVE', INACTIVE: 'INACTIVE', ARCHIVED: 'ARCHIVED' },
  toggle: { ACTIVE: 'INACTIVE', INACTIVE: 'ACTIVE', ARCHIVED: REFUSED },
  archive: { ACTIVE: 'ARCHIVED', INACTIVE: 'ARCHIVED', ARCHIVED: 'ARCHIVED' },
  unarchive: { ACTIVE: 'ACTIVE', INACTIVE: 'INACTIVE', ARCHIVED: 'INACTIVE' },
};
const BULK_TRANSITIONS: Record<BulkAction, Transition> = { enable: 'activate', disable: 'deactivate', archive: 'archive' };

function rulesError(msg: string, loc: Loc = ['body', 'targeting_rules']): Unprocessable {
  return new Unprocessable({ type: 'value_error', loc, msg });
}

export interface FlagsDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  bus: Bus;
  segments: Pick<SegmentsService, 'unusableSegmentIds' | 'regexConditionsExceeded' | 'definitions' | 'membershipEnv'>;
  /** Spec: deleting a flag keeps its tagged events, with feature_flag_id null (tracking owns the events). */
  tracking: { detachFlag(flagId: string): Promise<void> };
  /** A flag's change history, with the audit log's access rule (DEVELOPER and VIEWER see only their own entries). */
  auditLogs: Pick<AuditLogsService, 'history'>;
  /** The default environment and the environments a request may name (held in memory by the environments module). */
  environments: Pick<EnvironmentsService, 'defaultKey' | 'resolve' | 'keys'>;
}

export type FlagsService = ReturnType<typeof createFlagsService>;

export function createFlagsService(deps: FlagsDeps) {
  const { db, audit, clock, segments, environments } = deps;
  /** One compiled ruleset per environment, each compiled, cached and invalidated on its own. */
  const rulesets = new Map<string, ReturnType<typeof createRulesetCache>>();
  function rulesetOf(environment: string) {
    let cache = rulesets.get(environment);
    if (!cache) {
      cache = createRulesetCache(
        () => loadRuleset({ allFlags: () => store.allFlags(db, environment), segmentDefinitions: segments.definitions }),
        clock,
        RULESET_MAX_AGE_MS,
      );
      rulesets.set(environment, cache);
    }
    return cache;
  }
  function invalidate(environment: string | null): void {
    if (environment === null) for (const cache of rulesets.values()) cache.invalidate();
    else rulesets.get(environment)?.invalidate();
  }
  deps.bus.subscribe(FLAGS_CHANGED, (message) => invalidate(changedEnvironment(message)));
  deps.bus.subscribe(SEGMENTS_CHANGED, () => invalidate(null));
  // An environment created, deleted or re-created under the same key: its ruleset is compiled again.
  deps.bus.subscribe(ENVIRONMENTS_CHANGED, (key) => invalidate(key));

  async function changed(id: string, environment: string | null): Promise<void> {
    invalidate(environment);
    await deps.bus.publish(FLAGS_CHANGED, flagsChangedMessage({ environment, flag: id })).catch(() => undefined);
  }

  /** The environment a bearer-token route names in ?environment= (absent: the default; unknown: 404). */
  const environmentOf = (key: string | undefined) => environments.resolve(key, QUERY_ENVIRONMENT);
  /** The environment an evaluation answers in: the API key's (absent: the default). */
  const servingEnvironment = (key: string | undefined) => (key === undefined ? environments.defaultKey() : Promise.resolve(key));
  const rulesetIn = async (key: string | undefined) => rulesetOf(await servingEnvironment(key)).get();
  const evaluation = createFlagEvaluation({ rulesetIn, segments });

  /**
   * The flag view, with every environment's state (one more query) once there is more than one environment: an
   * installation with only the default environment answers exactly the view from before environments.
   */
  async function view(row: FeatureFlagRow): Promise<FlagView> {
    return (await views([row]))[0];
  }
  async function views(rows: FeatureFlagRow[]): Promise<FlagView[]> {
    if ((await environments.keys()).length < 2) return rows.map((row) => toFlagView(row));
    const states = await store.statesOf(db, rows.map((r) => r.id));
    const byFlag = new Map<string, FlagStateRow[]>();
    for (const state of states) byFlag.set(state.flagId, [...(byFlag.get(state.flagId) ?? []), state]);
    return rows.map((row) => toFlagView(row, byFlag.get(row.id) ?? []));
  }

  /** Shape first (pure), then, inside the writing transaction, the segments named (share-locked until commit). */
  async function checkedRules(tx: Executor, rules: unknown, loc?: Loc): Promise<string[]> {
    const problem = validateRuleSet(rules);
    if (problem) throw rulesError(problem, loc);
    const segmentIds = collectSegmentIds(rules);
    if ((await segments.unusableSegmentIds(segmentIds, tx)).length > 0) throw rulesError(SEGMENT_NOT_USABLE, loc);
    if (await segments.regexConditionsExceeded(rules, tx)) throw rulesError(RULE_MESSAGES.tooManyRegex, loc);
    return segmentIds;
  }

  /**
   * The targeting rules and typed fields after a change, checked: `segmentIds` names every segment the flag's rules
   * and its variation rules name. Rules are checked only where sent (stored ones were checked when written).
   */
  async function checkedFlagRules(tx: Executor, stored: FeatureFlagRow | null, body: FlagCreate | FlagUpdate): Promise<FlagValues> {
    const values: FlagValues = {};
    const storedTyped = stored ? typedFieldsOf(stored) : null;
    const typedBody = body as TypedBody;
    let next: TypedFields | null = null;
    if (!stored || sentTyped(typedBody)) {
      next = mergeTyped(storedTyped ?? { value_type: 'boolean', variations: null, default_variation: null, off_variation: null, variation_rules: null, variation_split: null }, typedBody);
      const issues = typedProblems(next, typedBody, storedTyped);
      if (issues.length > 0) throw new Unprocessable(issues);
      Object.assign(values, typedValues(next));
    }
    const ruleSegments: string[] = [];
    if (body.targeting_rules !== undefined) {
      ruleSegments.push(...(await checkedRules(tx, body.targeting_rules)));
      values.targetingRules = body.targeting_rules;
    } else ruleSegments.push(...collectSegmentIds(stored?.targetingRules ?? null));
    const variationRules = next?.variation_rules ?? storedTyped?.variation_rules ?? [];
    for (const [i, rule] of variationRules.entries()) {
      ruleSegments.push(...(typedBody.variation_rules !== undefined
        ? await checkedRules(tx, rule.targeting_rules, ['body', 'variation_rules', i, 'targeting_rules'])
        : collectSegmentIds(rule.targeting_rules)));
    }
    if (body.targeting_rules !== undefined || typedBody.variation_rules !== undefined || !stored) values.segmentIds = [...new Set(ruleSegments)];
    // One evaluation may run the targeting rules and every variation rule: the regex cap holds for all of them together.
    if (variationRules.length > 0 && (body.targeting_rules !== undefined || typedBody.variation_rules !== undefined)) {
      const everyRule = [values.targetingRules ?? stored?.targetingRules, ...variationRules.map((rule) => rule.targeting_rules)];
      const groups = everyRule.flatMap((rules) => (isRuleSetShape(rules) ? rules.groups : []));
      if (await segments.regexConditionsExceeded({ logical_operator: 'AND', groups }, tx)) {
        throw rulesError(RULE_MESSAGES.tooManyRegex, typedBody.variation_rules !== undefined ? ['body', 'variation_rules'] : undefined);
      }
    }
    return values;
  }

  /**
   * One change to one flag under its row lock: `decide` returns the new values (or throws a refusal); fields that
   * really change are written with one `feature_flag_update` entry in the same transaction. No publish here.
   */
  async function applyChange(
    actor: AuditActor | null,
    id: string,
    environment: string,
    decide: (current: FeatureFlagRow, tx: Executor) => Promise<FlagValues> | FlagValues,
    details?: Record<string, unknown>,
  ): Promise<{ row: FeatureFlagRow; stateOnly: boolean }> {
    // Before the transaction: embedded PGlite has one connection, which the transaction holds until it ends.
    const auditDetails = await withEnvironment(details, environment);
    try {
      return await db.transaction(async (tx) => {
        const current = await store.findFlagForUpdate(tx, id, environment);
        if (!current) throw new NotFound(FLAG_NOT_FOUND);
        const values = await decide(current, tx);
        const before: Record<string, unknown> = {};
        const after: Record<string, unknown> = {};
        for (const [field, wire] of Object.entries(AUDITED_FIELDS) as Array<[keyof typeof AUDITED_FIELDS, string]>) {
          if (!(field in values) || JSON.stringify(values[field]) === JSON.stringify(current[field])) continue;
          before[wire] = current[field];
          after[wire] = values[field];
        }
        const changedFields = Object.entries(AUDITED_FIELDS).filter(([, wire]) => wire in after).map(([field]) => field);
        const stateOnly = changedFields.every((field) => STATE_AUDITED.has(field));
        if (Object.keys(after).length === 0) return { row: current, stateOnly: true };
        const updated = await store.updateFlag(tx, id, environment, { ...values, updatedAt: clock.now() });
        await audit.record(tx, actor, {
          action: 'feature_flag_update', entityType: 'feature_flag', entityId: id, before, after,
          details: auditDetails,
        });
        return { row: updated, stateOnly };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(FLAG_KEY_TAKEN);
      throw error;
    }
  }

  function transitionTo(transition: Transition) {
    return (current: FeatureFlagRow): FlagValues => {
      const next = TRANSITIONS[transition][current.status];
      if (next === REFUSED) throw new BadRequest(ARCHIVED_CANNOT_TURN_ON);
      return { status: next };
    };
  }

  /**
   * The audit details of a change in `environment`: a change in another environment than the default names it (a
   * change without `environment` in its details was made in the default environment, as every change before
   * environments existed).
   */
  async function withEnvironment(details: Record<string, unknown> | undefined, environment: string): Promise<Record<string, unknown> | undefined> {
    if (environment === (await environments.defaultKey())) return details;
    return { ...details, environment };
  }

  /** A change committed: the environment's ruleset (every one's when a shared field changed) is compiled again. */
  async function committed(id: string, environment: string, change: { row: FeatureFlagRow; stateOnly: boolean }): Promise<FlagView> {
    await changed(id, change.stateOnly ? environment : null);
    return view(change.row);
  }

  async function transition(actor: AuditActor | null, id: string, t: Transition, environmentKey?: string): Promise<FlagView> {
    const environment = await environmentOf(environmentKey);
    return committed(id, environment, await applyChange(actor, id, environment, transitionTo(t)));
  }

  return {
    async list(query: FlagListQuery) {
      const { rows, total } = await store.listFlags(db, await environmentOf(query.environment), query);
      return { items: await views(rows), total, skip: query.skip, limit: query.limit };
    },

    async getFlag(id: string, environmentKey?: string): Promise<FlagView> {
      const row = await store.findFlag(db, id, await environmentOf(environmentKey));
      if (!row) throw new NotFound(FLAG_NOT_FOUND);
      return view(row);
    },

    /**
     * A new flag: the body's state in the environment acted on; every other environment gets the same rules and
     * serving fields, turned off.
     */
    async create(actor: AuditActor, body: FlagCreate, environmentKey?: string): Promise<FlagView> {
      const environment = await environmentOf(environmentKey);
      // Read before the transaction (embedded PGlite has one connection, held by the transaction).
      const everyEnvironment = await environments.keys();
      const createDetails = await withEnvironment(undefined, environment);
      const now = clock.now();
      let row: FeatureFlagRow;
      try {
        row = await db.transaction(async (tx) => {
          const { valueType, variations, ...rules } = { targetingRules: null, ...(await checkedFlagRules(tx, null, body)) } as FlagValues;
          const state = store.stateOf({
            status: body.is_active === true ? 'ACTIVE' : 'INACTIVE',
            rolloutPercentage: body.rollout_percentage ?? 0,
            targetingRules: null,
            segmentIds: [],
            defaultVariation: null,
            offVariation: null,
            variationRules: null,
            variationSplit: null,
            ...rules,
          });
          const stateByEnvironment = new Map<string, FlagState>(everyEnvironment.map((key) => [key, { ...state, status: 'INACTIVE' as const }]));
          stateByEnvironment.set(environment, state);
          const inserted = await store.insertFlag(tx, {
            id: randomUUID(),
            key: body.key,
            name: body.name,
            description: body.description ?? null,
            defaultValue: false,
            valueType: valueType ?? 'boolean',
            variations: variations ?? null,
            tags: body.tags ?? null,
            ownerId: actor.id,
            createdAt: now,
            updatedAt: now,
          }, stateByEnvironment, environment);
          await audit.record(tx, actor, {
            action: 'feature_flag_create', entityType: 'feature_flag', entityId: inserted.id, after: snapshotOf(inserted),
            details: createDetails,
          });
          return inserted;
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw new Conflict(FLAG_KEY_TAKEN);
        throw error;
      }
      await changed(row.id, null);
      return view(row);
    },

    /** PUT: only the fields sent change; is_active true on an archived flag is refused, false leaves it archived. */
    async update(actor: AuditActor, id: string, body: FlagUpdate, environmentKey?: string): Promise<FlagView> {
      const environment = await environmentOf(environmentKey);
      const change = await applyChange(actor, id, environment, async (current, tx) => {
        const values: FlagValues = {};
        if (body.is_active !== undefined) Object.assign(values, transitionTo(body.is_active ? 'activate' : 'deactivate')(current));
        if (body.key !== undefined) values.key = body.key;
        Object.assign(values, await checkedFlagRules(tx, current, body));
        if (body.name !== undefined) values.name = body.name;
        if (body.description !== undefined) values.description = body.description;
        if (body.rollout_percentage !== undefined) values.rolloutPercentage = body.rollout_percentage;
        if (body.default_value !== undefined) values.defaultValue = body.default_value;
        if (body.tags !== undefined) values.tags = body.tags;
        return values;
      });
      return committed(id, environment, change);
    },

    async delete(actor: AuditActor, id: string): Promise<void> {
      const environment = await environments.defaultKey();
      await db.transaction(async (tx) => {
        const current = await store.findFlagForUpdate(tx, id, environment);
        if (!current) throw new NotFound(FLAG_NOT_FOUND);
        await store.deleteFlag(tx, id);
        await audit.record(tx, actor, { action: 'feature_flag_delete', entityType: 'feature_flag', entityId: id, before: snapshotOf(current) });
      });
      await changed(id, null);
      // After the commit: tracking answers on its own connection (embedded PGlite has one, held by the transaction).
      await deps.tracking.detachFlag(id);
    },

    activate: (actor: AuditActor, id: string, environment?: string) => transition(actor, id, 'activate', environment),
    deactivate: (actor: AuditActor, id: string, environment?: string) => transition(actor, id, 'deactivate', environment),
    toggle: (actor: AuditActor, id: string, environment?: string) => transition(actor, id, 'toggle', environment),
    unarchive: (actor: AuditActor, id: string, environment?: string) => transition(actor, id, 'unarchive', environment),

    /** Each flag in its own transaction: one refusal or unknown id does not stop the others (spec). */
    async bulkToggle(actor: AuditActor, ids: string[], action: BulkAction, environmentKey?: string): Promise<BulkToggleResult> {
      const environment = await environmentOf(environmentKey);
      const results: BulkToggleResult['results'] = [];
      for (const id of ids) {
        try {
          await applyChange(actor, id, environment, transitionTo(BULK_TRANSITIONS[action]));
          results.push({ id, success: true, error: null });
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          results.push({ id, success: false, error: String(error.detail) });
        }
      }
      await changed(ids.join(','), environment);
      return { results };
    },

    /** Spec, audit access: ADMIN and ANALYST (and superusers) read every entry, others only their own. */
    async history(actor: Actor, id: string, page: { skip: number; limit: number }): Promise<HistoryEntry[]> {
      if (!(await store.findFlag(db, id, await environments.defaultKey()))) throw new NotFound(FLAG_NOT_FOUND);
      const { items } = await deps.auditLogs.history(actor, 'feature_flag', id, page.skip, page.limit);
      return items.map(({ id: entryId, action, actor_id, actor_username, before, after, details, created_at }) => ({
        id: entryId, action, actor_id, actor_username, before, after, details, created_at,
      }));
    },

    /**
     * For rollout schedules and safety: one rollout change decided under the flag's row lock. `decide` runs in the
     * same transaction, sees the locked flag and may write through `tx` (its writes commit or roll back with the
     * flag's); it returns the rollout to set and whether to turn the flag off (an archived flag stays archived), or
     * throws a refusal. Stages and rollbacks both change the rollout here, so they take turns on the flag row.
     */
    async changeRollout(
      flagId: string,
      actor: AuditActor | null,
      details: Record<string, unknown>,
      decide: (flag: FlagView, tx: Executor) => Promise<{ percentage: number; turnOff?: boolean }>,
      environmentKey?: string | null,
    ): Promise<FlagView> {
      const environment = environmentKey ?? (await environments.defaultKey());
      const change = await applyChange(actor, flagId, environment, async (current, tx) => {
        const { percentage, turnOff } = await decide(toFlagView(current), tx);
        if (!Number.isInteger(percentage) || percentage < 0 || percentage > 100) throw new RangeError('rollout percentage must be an integer from 0 to 100');
        return { rolloutPercentage: percentage, ...(turnOff ? transitionTo('deactivate')(current) : {}) };
      }, details);
      return committed(flagId, environment, change);
    },

    /** `contextLoc` names where the context came from, for the 422 of the context limits. */
    ...evaluation,

    /** An environment's compiled ruleset (SDK download; absent: the default's); the same object until its next invalidation. */
    snapshot: (environment?: string) => rulesetIn(environment),

    /**
     * Copies one flag's state from one environment to another in one transaction (audited as a feature_flag_update
     * naming both): the target then serves exactly what the source does.
     */
    async copyState(actor: AuditActor, id: string, target: string, from: string): Promise<FlagView> {
      const to = await environments.resolve(target, ['path', 'target']);
      const source = await environments.resolve(from, ['body', 'from'], true);
      const change = await applyChange(actor, id, to, async (_current, tx) => {
        const row = await store.findFlag(tx, id, source);
        if (!row) throw new NotFound(FLAG_NOT_FOUND);
        return store.stateOf(row);
      }, { copied_from: source, environment: to });
      return committed(id, to, change);
    },

    /** Read model for export: flags created in a period (default environment's state), a page at a time, and the period's counts. */
    exportPage: async (period: CreatedPeriod, cursor?: Cursor) => store.exportPage(db, await environments.defaultKey(), period, cursor),
    periodSummary: async (period: CreatedPeriod) => store.periodSummary(db, await environments.defaultKey(), period),

    /** For tracking and error reports: the id of the flag with this key (ids are shared), from the cached ruleset. */
    async idByKey(key: string): Promise<string | undefined> {
      return (await rulesetIn(undefined)).byKey.get(key)?.row.id;
    },

    /** For tracking: whether a flag has this id, from the cached ruleset. */
    async exists(id: string): Promise<boolean> {
      return (await rulesetIn(undefined)).flags.some((f) => f.row.id === id);
    },

    /** For metrics: every flag's key by its id, from the cached ruleset. */
    async keysById(): Promise<Map<string, string>> {
      return new Map((await rulesetIn(undefined)).flags.map((f) => [f.row.id, f.row.key]));
    },
  };
}
