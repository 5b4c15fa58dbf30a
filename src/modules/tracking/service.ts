import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { Bus } from '../../platform/bus.js';
import type { BatchWriter } from '../../platform/batch-writer.js';
import type { Clock } from '../../platform/clock.js';
import { localCache } from '../../platform/local-cache.js';
import { BadRequest, NotFound, Unprocessable } from '../../platform/errors.js';
import { checkTargetingContext, collectSegmentIds, experimentSalt, isRuleSetShape, pickWeighted, ruleSetEvaluator, type EvaluationEnv } from '../../targeting/index.js';
import type { AssignableExperiment } from '../experiments/read-model.js';
import { EXPERIMENTS_CHANGED } from '../experiments/service.js';
import { MUTUAL_EXCLUSION_CHANGED } from '../mutual-exclusion/domain.js';
import { isInHoldout } from '../holdout/domain.js';
import { mutexSlot } from '../mutual-exclusion/domain.js';
import type {
  AssignBody, AssignmentReason, AssignmentView, BatchAssignBody, BatchTrackBody, EventView, PeekQuery, PeekView, TrackBody, TrackByIdsBody,
} from './schemas.js';
import * as store from './store.js';
import type { AssignmentRow, EventRow } from './store.js';
import type { AssignmentWriter } from './writer.js';
import { report, telemetry } from '../../platform/telemetry.js';

export const VIEW_EVENT = '$view';
export const VARIANT_OF_OTHER_EXPERIMENT = 'variant_id names a variant of another experiment than experiment_id';
export const experimentNotAssignable = (key: string) => `No active experiment has the key '${key}'`;
export const experimentKeyNotFound = (key: string) => `No experiment has the experiment_key '${key}'.`;
const REFRESH_CHANNELS = [EXPERIMENTS_CHANGED, MUTUAL_EXCLUSION_CHANGED];
const ASSIGNMENT_CACHE_LIMIT = 200_000;
const ASSIGNMENT_CACHE_TTL_MS = 3_600_000;
const EXPERIMENT_CACHE_LIMIT = 5_000;
/** An experiment is re-read at least this often, even if a bus message announcing its change was lost. */
const EXPERIMENT_CACHE_TTL_MS = 60_000;

export interface TrackingDeps {
  db: Db;
  clock: Clock;
  bus: Bus;
  events: BatchWriter<EventRow>;
  assignments: AssignmentWriter;
  experiments: {
    findAssignable(key: string): Promise<AssignableExperiment | undefined>;
    findAssignableById(id: string): Promise<AssignableExperiment | undefined>;
    experimentOfVariant(variantId: string): Promise<string | undefined>;
  };
  /** Flag ids for events tagged with a flag (the flags module's cached ruleset answers). */
  flags: { idByKey(key: string): Promise<string | undefined>; exists(id: string): Promise<boolean> };
  /** The active global holdout, if any (its module keeps it in memory). */
  holdout: { active(): Promise<{ id: string; percentage: number } | null> };
  /** Segments (and this user's id-list memberships) for `in_segment` conditions in experiment targeting rules. */
  segments: { targetingEnv(segmentIds: string[], userId: string): Promise<EvaluationEnv> };
  /** Current bandit weights by variant id (null for a non-bandit experiment or one without state yet). */
  bandit: { weightsFor(experiment: AssignableExperiment): Promise<Record<string, number> | null> };
}

export type TrackingService = ReturnType<typeof createTrackingService>;

type Variant = AssignableExperiment['variants'][number];

function contextProblem(context: Record<string, unknown> | undefined, loc: (string | number)[], prefix = ''): void {
  if (context === undefined) return;
  const problem = checkTargetingContext(context);
  if (problem) throw new Unprocessable({ type: 'value_error', loc, msg: `${prefix}${problem}` });
}

/**
 * Assignment and event ingestion: the hot paths. Experiments are held in memory by key and dropped on every change
 * announced on the bus; assignments are immutable once made, so a bounded in-memory map answers returning users;
 * events and view events go through the group-commit writer and are acknowledged once stored.
 */
export function createTrackingService(deps: TrackingDeps) {
  const { db, clock } = deps;
  const byKey = localCache<string, AssignableExperiment>({ max: EXPERIMENT_CACHE_LIMIT, ttlMs: EXPERIMENT_CACHE_TTL_MS });
  const byId = localCache<string, AssignableExperiment>({ max: EXPERIMENT_CACHE_LIMIT, ttlMs: EXPERIMENT_CACHE_TTL_MS });
  const known = localCache<string, string>({ max: ASSIGNMENT_CACHE_LIMIT, ttlMs: ASSIGNMENT_CACHE_TTL_MS });
  const clearExperiments = () => {
    byKey.clear();
    byId.clear();
  };
  for (const channel of REFRESH_CHANNELS) deps.bus.subscribe(channel, clearExperiments);

  // Both maps are cleared together, so one generation check covers both: a read that raced a change keeps nothing.
  async function experimentByKey(key: string): Promise<AssignableExperiment | undefined> {
    const found = await byKey.fill(key, () => deps.experiments.findAssignable(key));
    if (found && byKey.get(key) === found) byId.set(found.id, found);
    return found;
  }

  async function experimentById(id: string): Promise<AssignableExperiment | undefined> {
    const found = await byId.fill(id, () => deps.experiments.findAssignableById(id));
    if (found && byId.get(id) === found) byKey.set(found.key, found);
    return found;
  }

  async function assignableExperiment(key: string): Promise<AssignableExperiment> {
    const experiment = await experimentByKey(key);
    if (!experiment || experiment.status !== 'active') throw new NotFound(experimentNotAssignable(key));
    return experiment;
  }

  /** Cached (experiment, user) → variant id; assignments never change once made. */
  function remember(experimentId: string, userId: string, variantId: string): void {
    known.set(store.assignmentKey(experimentId, userId), variantId);
  }

  async function existingVariant(experimentId: string, userId: string): Promise<string | undefined> {
    const key = store.assignmentKey(experimentId, userId);
    const cached = known.get(key);
    if (cached) return cached;
    const row = await store.findAssignment(db, experimentId, userId);
    if (row) remember(experimentId, userId, row.variantId);
    return row?.variantId;
  }

  const controlOf = (e: AssignableExperiment): Variant => e.variants.find((v) => v.isControl) ?? e.variants[0];

  /** Spec assignment rule 2: holdout, then mutual exclusion group, then targeting, for a user not yet enrolled. */
  async function eligibility(e: AssignableExperiment, userId: string, context: Record<string, unknown>): Promise<AssignmentReason> {
    const holdout = await deps.holdout.active();
    if (holdout && isInHoldout(holdout, userId)) return 'holdout';
    if (e.mutualExclusionGroup && mutexSlot(e.mutualExclusionGroup, userId) !== e.id) return 'mutual_exclusion';
    if (e.targetingRules && isRuleSetShape(e.targetingRules)) {
      let matched = false;
      try {
        const env = await deps.segments.targetingEnv(collectSegmentIds(e.targetingRules), userId);
        matched = ruleSetEvaluator(e.targetingRules).evaluate({ user_id: userId, ...context }, env);
      } catch {
        // A segment the rules name is missing or invalid: the user cannot be shown to match.
        matched = false;
      }
      if (!matched) return 'targeting';
    }
    return 'assigned';
  }

  function chooseVariant(e: AssignableExperiment, userId: string, weights: Record<string, number> | null): Variant {
    const allocations = e.variants.map((v) => (weights ? (weights[v.id] ?? 0) * 100 : v.trafficAllocation));
    const index = pickWeighted(experimentSalt(e.key), userId, allocations);
    return e.variants[index] ?? controlOf(e);
  }

  async function enroll(
    e: AssignableExperiment, userId: string, context: Record<string, unknown> | undefined,
    weights: Record<string, number> | null, source: 'assign' | 'batch',
  ): Promise<string> {
    const variant = chooseVariant(e, userId, weights);
    const held = await deps.assignments.insertIfAbsent({
      id: randomUUID(), experimentId: e.id, variantId: variant.id, userId, context: context ?? null, source, createdAt: clock.now(),
    } satisfies AssignmentRow);
    remember(e.id, userId, held.variantId);
    return held.variantId;
  }

  function view(e: AssignableExperiment, userId: string, variant: Variant, reason: AssignmentReason): AssignmentView {
    return {
      experiment_key: e.key, user_id: userId, variant_id: variant.id, variant_name: variant.name,
      is_control: variant.isControl, configuration: variant.configuration ?? null, assigned: reason === 'assigned', reason,
    };
  }

  const variantById = (e: AssignableExperiment, id: string) => e.variants.find((v) => v.id === id) ?? controlOf(e);

  function viewEvent(e: AssignableExperiment, userId: string, variantId: string): EventRow {
    return {
      id: randomUUID(), eventName: VIEW_EVENT, userId, experimentId: e.id, featureFlagId: null, variantId,
      value: null, metadata: null, kind: 'view', createdAt: clock.now(),
    };
  }

  async function resolveKeys(body: TrackBody): Promise<{ experiment?: AssignableExperiment; flagId?: string; problems: string[] }> {
    const problems: string[] = [];
    const experiment = body.experiment_key === undefined ? undefined : await experimentByKey(body.experiment_key);
    if (body.experiment_key !== undefined && !experiment) problems.push(experimentKeyNotFound(body.experiment_key));
    const flagId = body.feature_flag_key === undefined ? undefined : await deps.flags.idByKey(body.feature_flag_key);
    if (body.feature_flag_key !== undefined && !flagId) problems.push(`No feature flag has the feature_flag_key '${body.feature_flag_key}'.`);
    return { experiment, flagId, problems };
  }

  /** An event of an assigned user is attached to that user's variant. */
  async function toEventRow(body: TrackBody, experiment: AssignableExperiment | undefined, flagId: string | undefined): Promise<EventRow> {
    const variantId = experiment && body.user_id ? ((await existingVariant(experiment.id, body.user_id)) ?? null) : null;
    return {
      id: randomUUID(), eventName: body.event_type, userId: body.user_id ?? null, experimentId: experiment?.id ?? null,
      featureFlagId: flagId ?? null, variantId, value: body.value ?? null, metadata: body.metadata ?? null, kind: 'track', createdAt: clock.now(),
    };
  }

  function eventView(row: EventRow, experimentKey: string | undefined, flagKey: string | undefined): EventView {
    return {
      id: row.id, event_name: row.eventName, user_id: row.userId, value: row.value, experiment_key: experimentKey ?? null,
      feature_flag_key: flagKey ?? null, variant_id: row.variantId, metadata: row.metadata, created_at: row.createdAt.toISOString(),
    };
  }

  return {
    /** POST /tracking/assign: sticky per user; every call for an enrolled user records a view event. */
    async assign(body: AssignBody): Promise<AssignmentView> {
      contextProblem(body.context, ['body', 'context']);
      const e = await assignableExperiment(body.experiment_key);
      // Known here: one map lookup. Otherwise an eligible user goes straight to insert-if-absent (which returns an
      // earlier assignment if there is one); only an ineligible user needs a read to learn whether they are enrolled.
      let variantId = known.get(store.assignmentKey(e.id, body.user_id));
      if (!variantId) {
        const reason = await eligibility(e, body.user_id, body.context ?? {});
        if (reason === 'assigned') variantId = await enroll(e, body.user_id, body.context, await deps.bandit.weightsFor(e), 'assign');
        else variantId = await existingVariant(e.id, body.user_id);
        if (!variantId) {
          report(telemetry.assignments, { outcome: reason, count: 1 });
          return view(e, body.user_id, controlOf(e), reason);
        }
      }
      await deps.events.write([viewEvent(e, body.user_id, variantId)]);
      report(telemetry.assignments, { outcome: 'assigned', count: 1 });
      return view(e, body.user_id, variantById(e, variantId), 'assigned');
    },

    /** POST /tracking/assign/batch: every context checked first; order kept; no view events; bandit weights read once. */
    async assignBatch(body: BatchAssignBody) {
      const seen = new Set<string>();
      body.users.forEach((u, i) => {
        if (seen.has(u.user_id)) {
          throw new Unprocessable({ type: 'value_error', loc: ['body', 'users', i, 'user_id'], msg: `Value error, users[${i}]: user_id values must be distinct` });
        }
        seen.add(u.user_id);
        contextProblem(u.context, ['body', 'users', i, 'context'], `users[${i}]: `);
      });
      const e = await assignableExperiment(body.experiment_key);
      const weights = await deps.bandit.weightsFor(e);
      const existing = new Map((await store.findAssignmentsForUsers(db, e.id, body.users.map((u) => u.user_id))).map((a) => [a.userId, a.variantId]));
      const counts = { assigned: 0, holdout: 0, mutual_exclusion: 0, targeting: 0 };
      const assignments = [];
      for (const u of body.users) {
        let variantId = existing.get(u.user_id);
        let reason: AssignmentReason = 'assigned';
        if (!variantId) {
          reason = await eligibility(e, u.user_id, u.context ?? {});
          variantId = reason === 'assigned' ? await enroll(e, u.user_id, u.context, weights, 'batch') : controlOf(e).id;
        }
        counts[reason]++;
        assignments.push({ user_id: u.user_id, variant_id: variantId, assigned: reason === 'assigned', reason });
      }
      const variants = Object.fromEntries(e.variants.map((v) => [v.id, { name: v.name, is_control: v.isControl, configuration: v.configuration ?? null }]));
      for (const [outcome, count] of Object.entries(counts)) if (count) report(telemetry.assignments, { outcome, count });
      return { experiment_key: e.key, variants, assignments, counts };
    },

    /** POST /tracking/track: unknown keys are 404 naming only the keys sent; keyless events are stored unattached. */
    async track(body: TrackBody): Promise<EventView> {
      const { experiment, flagId, problems } = await resolveKeys(body);
      // Refused requests are counted as rejected by the route (every cause alike).
      if (problems.length) throw new NotFound(problems.join(' '));
      const row = await toEventRow(body, experiment, flagId);
      await deps.events.write([row]);
      report(telemetry.events, { accepted: 1, rejected: 0 });
      return eventView(row, body.experiment_key, body.feature_flag_key);
    },

    /** POST /tracking/batch: valid events are stored, invalid ones listed with their position. */
    async trackBatch(body: BatchTrackBody) {
      const rows: EventRow[] = [];
      const results: Array<{ index: number; success: boolean; id?: string; error?: string }> = [];
      const errors: Array<{ index: number; error: string }> = [];
      for (const [index, event] of body.events.entries()) {
        const { experiment, flagId, problems } = await resolveKeys(event);
        if (problems.length) {
          const error = problems.join(' ');
          results.push({ index, success: false, error });
          errors.push({ index, error });
          continue;
        }
        const row = await toEventRow(event, experiment, flagId);
        rows.push(row);
        results.push({ index, success: true, id: row.id });
      }
      await deps.events.write(rows);
      report(telemetry.events, { accepted: rows.length, rejected: errors.length });
      return { received: body.events.length, stored: rows.length, failed: errors.length, results, errors };
    },

    /** POST /tracking/events: ids instead of keys; one sentence per id that names nothing, never the id. */
    async trackByIds(body: TrackByIdsBody) {
      const problems: string[] = [];
      const experiment = body.experiment_id ? await experimentById(body.experiment_id) : undefined;
      if (body.experiment_id && !experiment) problems.push('No experiment has that experiment_id.');
      if (body.feature_flag_id && !(await deps.flags.exists(body.feature_flag_id))) problems.push('No feature flag has that feature_flag_id.');
      let experimentId = experiment?.id ?? null;
      if (body.variant_id) {
        const owner = await deps.experiments.experimentOfVariant(body.variant_id);
        if (!owner) problems.push('No variant has that variant_id.');
        else if (experiment && owner !== experiment.id) throw new BadRequest(VARIANT_OF_OTHER_EXPERIMENT);
        else experimentId = owner;
      }
      if (problems.length) throw new NotFound(problems.join(' '));
      const row: EventRow = {
        id: randomUUID(), eventName: body.event_type, userId: body.user_id ?? null, experimentId,
        featureFlagId: body.feature_flag_id ?? null, variantId: body.variant_id ?? null, value: body.value ?? null,
        metadata: body.metadata ?? null, kind: 'track', createdAt: clock.now(),
      };
      await deps.events.write([row]);
      report(telemetry.events, { accepted: 1, rejected: 0 });
      return {
        id: row.id, event_name: row.eventName, user_id: row.userId, value: row.value, experiment_id: row.experimentId,
        feature_flag_id: row.featureFlagId, variant_id: row.variantId, metadata: row.metadata, created_at: row.createdAt.toISOString(),
      };
    },

    /**
     * GET /tracking/assign/peek (beta): the user's stored assignment, read from the database (never the in-memory
     * map of another process's view), in any status; nothing is enrolled, evaluated or recorded.
     */
    async peek(q: PeekQuery): Promise<PeekView> {
      const e = await experimentByKey(q.experiment_key);
      if (!e) throw new NotFound(experimentKeyNotFound(q.experiment_key));
      const row = await store.findAssignment(db, e.id, q.user_id);
      const v = row ? variantById(e, row.variantId) : undefined;
      return {
        experiment_key: e.key, experiment_status: e.status, user_id: q.user_id, assigned: v !== undefined,
        variant_id: v?.id ?? null, variant_name: v?.name ?? null, is_control: v?.isControl ?? null,
        configuration: v ? (v.configuration ?? null) : null, assigned_at: row?.createdAt.toISOString() ?? null,
      };
    },

    /** GET /tracking/assignments/{user_id}. */
    async userAssignments(userId: string) {
      const rows = await store.listUserAssignments(db, userId);
      const out = [];
      for (const row of rows) {
        const e = await experimentById(row.experimentId);
        if (!e) continue;
        const v = variantById(e, row.variantId);
        out.push({
          experiment_id: e.id, experiment_key: e.key, experiment_name: e.name, variant_id: v.id, variant_name: v.name,
          is_control: v.isControl, assigned_at: row.createdAt.toISOString(),
        });
      }
      return out;
    },
  };
}
