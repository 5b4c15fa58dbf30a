import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/client.js';
import { isoMicros, toIsoMicros } from '../../db/schema/exact-timestamp.js';
import type { ExperimentRow, ExperimentStatus, MetricRow, VariantRow } from '../../db/schema/experiments.js';
import { SYSTEM_ACTOR, type AuditActor, type AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Bus } from '../../platform/bus.js';
import type { Cache } from '../../platform/cache.js';
import type { Clock } from '../../platform/clock.js';
import { BadRequest, Conflict, NotFound, NotImplemented, Unprocessable, type ValidationIssue } from '../../platform/errors.js';
import { collectSegmentIds, validateRuleSet } from '../../targeting/index.js';
import { statusChangeRefused, transition, type Transition } from './lifecycle.js';
import {
  BAYESIAN_DEFAULTS,
  completeConfig,
  metricIssues,
  SEQUENTIAL_DEFAULTS,
  variantIssues,
} from './rules.js';
import {
  KEY_MAX_LENGTH,
  type ExperimentCreate,
  type ExperimentListQuery,
  type ExperimentSchedule,
  type ExperimentUpdate,
  type ExperimentView,
  type MetricInput,
  type VariantInput,
} from './schemas.js';
import type { ExclusionGroup } from '../mutual-exclusion/membership.js';
import * as store from './store.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { CreatedPeriod, Cursor } from '../../db/paging.js';

export const EXPERIMENT_NOT_FOUND = 'Experiment not found';
export const KEY_TAKEN = 'An experiment with this key already exists';
export const SPLIT_URL_NOT_AVAILABLE = 'Split URL experiments are not available in the core deployment';
export const SEGMENT_NOT_USABLE = 'targeting rules: a segment is unknown, inactive, archived or has invalid rules';
export const CLONE_SEGMENT_NOT_USABLE =
  'Cannot clone: the targeting rules name a segment that is unknown, inactive, archived or has invalid rules';
export const END_BEFORE_START = 'Value error, end_date must be after start_date';
export const END_DATE_PASSED = 'The scheduled end_date has passed; change it with PUT /schedule before starting';
export const fieldLocked = (field: string, status: ExperimentStatus) => `Cannot update ${field} for experiments in ${status} status`;

/** Spec "Caching": experiment detail is cached one hour when CACHE_ENABLED is on, and cleared on every change. */
export const DETAIL_TTL_SECONDS = 3_600;
const detailKey = (id: string) => `experiment:${id}`;
/** Announced (with the experiment id) after every change, so caches in every process (detail, tracking) drop it. */
export const EXPERIMENTS_CHANGED = 'experiments.changed';

/** Statuses in which an experiment's targeting rules still matter (spec: segment in use). */
const LIVE_STATUSES: ExperimentStatus[] = ['draft', 'active', 'paused'];

/** The segments module's answer to "which of these segment ids may rules name?" (unknown, inactive, archived, invalid). */
export interface SegmentUsability {
  unusableSegmentIds(ids: string[]): Promise<string[]>;
}

/** What tracking needs to assign a user: see `findAssignable`. */
export interface AssignableExperiment {
  id: string;
  key: string;
  name: string;
  status: ExperimentStatus;
  experimentType: ExperimentRow['experimentType'];
  variants: Array<{ id: string; name: string; isControl: boolean; trafficAllocation: number; configuration: Record<string, unknown> | null }>;
  targetingRules: Record<string, unknown> | null;
  mutualExclusionGroup: ExclusionGroup | null;
}

export interface ExperimentsDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  bus: Bus;
  /** Present when CACHE_ENABLED is on. */
  cache: Cache | undefined;
  segments: SegmentUsability;
  users: { displayName(id: string): Promise<string | null> };
  /** The active mutual exclusion group holding an experiment (owned by the mutual-exclusion module). */
  exclusionGroupOf(experimentId: string): Promise<ExclusionGroup | null>;
  /**
   * The split URL module (full profile only, second spec document): validates and normalises split_url_config.
   * Absent in core, where creating a split_url experiment is 501 and a configuration is stored as sent.
   */
  splitUrl: { normalise(value: unknown, loc: (string | number)[]): Record<string, unknown> } | undefined;
  /** Alerts subscribers (notification preferences) after a start or completion has committed; never throws. */
  announce?: (kind: 'experiment_started' | 'experiment_completed', payload: { experiment_id: string; experiment_name: string }) => void;
}

export type ExperimentsService = ReturnType<typeof createExperimentsService>;

type VariantFields = Omit<VariantRow, 'id' | 'experimentId' | 'createdAt'>;
type MetricFields = Omit<MetricRow, 'id' | 'experimentId' | 'createdAt'>;

const iso = (d: Date | null) => d?.toISOString() ?? null;

export function toExperimentView(row: ExperimentRow, variants: VariantRow[], metrics: MetricRow[]): ExperimentView {
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    description: row.description,
    hypothesis: row.hypothesis,
    experiment_type: row.experimentType,
    status: row.status,
    variants: variants.map((v) => ({
      id: v.id,
      name: v.name,
      description: v.description,
      is_control: v.isControl,
      traffic_allocation: v.trafficAllocation,
      configuration: v.configuration,
    })),
    metrics: metrics.map((m) => ({
      id: m.id,
      name: m.name,
      description: m.description,
      event_name: m.eventName,
      metric_type: m.metricType,
      is_primary: m.isPrimary,
      expected_effect: m.expectedEffect,
    })),
    targeting_rules: row.targetingRules,
    correction_method: row.correctionMethod,
    confidence_level: row.confidenceLevel,
    sequential_testing_enabled: row.sequentialTestingEnabled,
    sequential_testing_config: row.sequentialTestingConfig as Record<string, unknown> | null,
    variance_reduction_config: row.varianceReductionConfig as Record<string, unknown> | null,
    bayesian_enabled: row.bayesianEnabled,
    bayesian_config: row.bayesianConfig as Record<string, unknown> | null,
    bayesian_decision: row.bayesianDecision,
    split_url_config: row.splitUrlConfig,
    metadata: row.metadata,
    start_date: row.startDate,
    end_date: row.endDate,
    owner_id: row.ownerId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** Rows of one request get ascending ids, so "created_at then id" (spec) is the order they were sent in. */
function ascendingIds(count: number): string[] {
  return Array.from({ length: count }, () => randomUUID()).sort();
}

const variantFields = (v: VariantInput): VariantFields => ({
  name: v.name,
  description: v.description ?? null,
  isControl: v.is_control ?? false,
  trafficAllocation: v.traffic_allocation,
  configuration: v.configuration ?? null,
});

const metricFields = (m: MetricInput): MetricFields => ({
  name: m.name,
  description: m.description ?? null,
  eventName: m.event_name,
  metricType: m.metric_type ?? 'conversion',
  isPrimary: m.is_primary ?? false,
  expectedEffect: m.expected_effect ?? null,
});

/** JSON with object keys sorted at every level: jsonb does not keep the key order that was sent. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

const sameVariants = (a: VariantFields[], b: VariantFields[]) => canonicalJson(a) === canonicalJson(b);

export function createExperimentsService(deps: ExperimentsDeps) {
  const { db, audit, clock, cache } = deps;
  if (cache) deps.bus.subscribe(EXPERIMENTS_CHANGED, (id) => void cache.delete(detailKey(id)));

  const who = (actor: Actor): AuditActor => ({ id: actor.id, username: actor.username });

  /** Clears the cached detail here at once, and through the bus every process's copies (detail, assignment). */
  async function changed(id: string): Promise<void> {
    if (cache) await cache.delete(detailKey(id));
    await deps.bus.publish(EXPERIMENTS_CHANGED, id).catch(() => undefined);
  }

  async function views(rows: ExperimentRow[], executor: Executor = db): Promise<ExperimentView[]> {
    const ids = rows.map((r) => r.id);
    const [variants, metrics] = await Promise.all([store.listVariants(executor, ids), store.listMetrics(executor, ids)]);
    return rows.map((row) =>
      toExperimentView(row, variants.filter((v) => v.experimentId === row.id), metrics.filter((m) => m.experimentId === row.id)),
    );
  }
  const view = async (row: ExperimentRow, executor: Executor = db) => (await views([row], executor))[0];

  async function locked(tx: Executor, id: string): Promise<ExperimentRow> {
    const row = await store.lockExperiment(tx, id);
    if (!row) throw new NotFound(EXPERIMENT_NOT_FOUND);
    return row;
  }

  /** Flag-style rule validation, then the segments the rules name must be usable (422 at body.targeting_rules). */
  async function checkTargetingRules(rules: Record<string, unknown> | null | undefined): Promise<void> {
    if (!rules) return;
    const loc = ['body', 'targeting_rules'];
    const problem = validateRuleSet(rules);
    if (problem) throw new Unprocessable({ type: 'value_error', loc, msg: problem });
    const ids = collectSegmentIds(rules);
    if (ids.length && (await deps.segments.unusableSegmentIds(ids)).length) {
      throw new Unprocessable({ type: 'value_error', loc, msg: SEGMENT_NOT_USABLE });
    }
  }

  function checkBody(body: { variants?: VariantInput[]; metrics?: MetricInput[]; experiment_type?: string }): void {
    if (body.experiment_type === 'split_url' && !deps.splitUrl) throw new NotImplemented(SPLIT_URL_NOT_AVAILABLE);
    const issues: ValidationIssue[] = [
      ...(body.variants ? variantIssues(body.variants, ['body', 'variants']) : []),
      ...(body.metrics ? metricIssues(body.metrics, ['body', 'metrics']) : []),
    ];
    if (issues.length) throw new Unprocessable(issues);
  }

  async function writeChildren(tx: Executor, experimentId: string, variants?: VariantFields[], metrics?: MetricFields[]) {
    const now = clock.now();
    if (variants) {
      await store.deleteVariants(tx, experimentId);
      const ids = ascendingIds(variants.length);
      await store.insertVariants(tx, variants.map((v, i) => ({ ...v, id: ids[i], experimentId, createdAt: now })));
    }
    if (metrics) {
      await store.deleteMetrics(tx, experimentId);
      const ids = ascendingIds(metrics.length);
      await store.insertMetrics(tx, metrics.map((m, i) => ({ ...m, id: ids[i], experimentId, createdAt: now })));
    }
  }

  /** PUT on an experiment past draft: the fields that no longer change (400 naming the field and status). */
  async function refuseFixedFields(tx: Executor, row: ExperimentRow, body: ExperimentUpdate): Promise<void> {
    // Spec: after draft any attempt is refused, even re-sending the stored value.
    for (const field of ['correction_method', 'confidence_level'] as const) {
      if (body[field] !== undefined) throw new BadRequest(fieldLocked(field, row.status));
    }
    // Tracking and recorded assignments depend on these, so once started they may only be re-sent unchanged.
    if (body.key !== undefined && body.key !== row.key) throw new BadRequest(fieldLocked('key', row.status));
    if (body.experiment_type !== undefined && body.experiment_type !== row.experimentType) {
      throw new BadRequest(fieldLocked('experiment_type', row.status));
    }
    if (body.variants) {
      const stored = (await store.listVariants(tx, [row.id])).map(({ id: _i, experimentId: _e, createdAt: _c, ...v }) => v);
      if (!sameVariants(stored, body.variants.map(variantFields))) throw new BadRequest(fieldLocked('variants', row.status));
    }
  }

  /** A key taken by a concurrent request between the check and the write is a 409 too, not a 500. */
  async function keyUnique<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(KEY_TAKEN);
      throw error;
    }
  }

  /** Inserts an experiment with its variants and metrics. */
  async function insert(
    actor: Actor,
    values: Omit<store.ExperimentInsert, 'id' | 'createdAt' | 'updatedAt' | 'ownerId' | 'status'>,
    variants: VariantFields[],
    metrics: MetricFields[],
    details: Record<string, unknown> | null,
  ): Promise<ExperimentView> {
    return keyUnique(() =>
      db.transaction(async (tx) => {
        if ((await store.takenKeys(tx, [values.key])).size) throw new Conflict(KEY_TAKEN);
        const now = clock.now();
        const row = await store.insertExperiment(tx, {
          ...values,
          id: randomUUID(),
          status: 'draft',
          ownerId: actor.id,
          createdAt: now,
          updatedAt: now,
        });
        await writeChildren(tx, row.id, variants, metrics);
        await audit.record(tx, who(actor), {
          action: 'experiment_create',
          entityType: 'experiment',
          entityId: row.id,
          after: { key: row.key, name: row.name, status: row.status, experiment_type: row.experimentType },
          details,
        });
        return view(row, tx);
      }),
    );
  }

  /**
   * Schedule rules shared by PUT and PUT /schedule: start_date is fixed once the experiment has started, nothing
   * is scheduled on a finished experiment, and the end must come after the start.
   */
  function scheduleChange(row: ExperimentRow, body: ExperimentSchedule): Pick<store.ExperimentChange, 'startDate' | 'endDate'> {
    const change: Pick<store.ExperimentChange, 'startDate' | 'endDate'> = {};
    if (body.start_date === undefined && body.end_date === undefined) return change;
    if (row.status === 'completed' || row.status === 'archived') {
      throw new Conflict(`Cannot schedule an experiment in ${row.status} status`);
    }
    if (body.start_date !== undefined) {
      const start = body.start_date === null ? null : toIsoMicros(body.start_date);
      if (row.status !== 'draft' && start !== row.startDate) throw new BadRequest(fieldLocked('start_date', row.status));
      change.startDate = start;
    }
    if (body.end_date !== undefined) change.endDate = body.end_date === null ? null : toIsoMicros(body.end_date);
    const start = change.startDate !== undefined ? change.startDate : row.startDate;
    const end = change.endDate !== undefined ? change.endDate : row.endDate;
    if (start && end && end <= start) {
      throw new Unprocessable({ type: 'value_error', loc: ['body', 'end_date'], msg: END_BEFORE_START });
    }
    return change;
  }

  /** A lifecycle move on a locked row: the table decides, `apply` writes the new state, the audit entry goes with it. */
  async function applyMove(
    tx: Executor,
    actor: AuditActor,
    row: ExperimentRow,
    name: Transition,
    apply: (to: ExperimentStatus) => Promise<ExperimentRow>,
  ): Promise<ExperimentRow> {
    const startsAhead = row.startDate !== null && Date.parse(String(row.startDate)) > clock.now().getTime();
    const to = transition(name, row.status, startsAhead) as ExperimentStatus;
    const next = await apply(to);
    await audit.record(tx, actor, {
      action: name === 'start' && row.status === 'paused' ? 'experiment_resume' : `experiment_${name}`,
      entityType: 'experiment',
      entityId: row.id,
      before: { status: row.status, start_date: row.startDate, end_date: row.endDate },
      after: { status: next.status, start_date: next.startDate, end_date: next.endDate },
    });
    return next;
  }

  async function move(
    actor: Actor,
    id: string,
    name: Transition,
    apply: (tx: Executor, row: ExperimentRow, to: ExperimentStatus) => Promise<ExperimentRow>,
  ): Promise<ExperimentView> {
    let from: ExperimentStatus | undefined;
    const result = await db.transaction(async (tx) => {
      const row = await locked(tx, id);
      from = row.status;
      return view(await applyMove(tx, who(actor), row, name, (to) => apply(tx, row, to)), tx);
    });
    await changed(id);
    announceMove(name, from, result.id, result.name);
    return result;
  }

  /** Spec "Events" 5: a draft starting and an experiment completing are alerted (a resume is not a start). */
  function announceMove(name: Transition, from: ExperimentStatus | undefined, id: string, experimentName: string): void {
    const payload = { experiment_id: id, experiment_name: experimentName };
    if (name === 'start' && from === 'draft') deps.announce?.('experiment_started', payload);
    if (name === 'complete') deps.announce?.('experiment_completed', payload);
  }

  /**
   * A scheduler move: the row is re-read under its lock and skipped when a person changed it since it was listed
   * (started or rescheduled by hand), so the job never fights the routes.
   */
  async function moveIfStillDue(
    id: string,
    name: Transition,
    isDue: (row: ExperimentRow) => boolean,
    apply: (tx: Executor, row: ExperimentRow, to: ExperimentStatus) => Promise<ExperimentRow>,
  ): Promise<void> {
    const moved = await db.transaction(async (tx) => {
      const row = await locked(tx, id);
      if (!isDue(row)) return undefined;
      await applyMove(tx, SYSTEM_ACTOR, row, name, (to) => apply(tx, row, to));
      return row;
    });
    if (moved) {
      await changed(id);
      announceMove(name, moved.status, moved.id, moved.name);
    }
  }

  return {
    async list(q: ExperimentListQuery): Promise<ExperimentView[]> {
      const rows = await store.listExperiments(db, {
        status: q.status_filter,
        search: q.search?.trim() || undefined,
        sortBy: q.sort_by,
        sortOrder: q.sort_order,
        skip: q.skip,
        limit: q.limit,
      });
      return views(rows);
    },

    /** GET detail with owner_name; cached when CACHE_ENABLED is on. */
    async get(id: string): Promise<ExperimentView> {
      const hit = cache && (await cache.get<ExperimentView>(detailKey(id)));
      if (hit) return hit;
      const row = await store.findExperiment(db, id);
      if (!row) throw new NotFound(EXPERIMENT_NOT_FOUND);
      const detail = { ...(await view(row)), owner_name: row.ownerId ? await deps.users.displayName(row.ownerId) : null };
      if (cache) await cache.set(detailKey(id), detail, DETAIL_TTL_SECONDS);
      return detail;
    },

    async create(actor: Actor, body: ExperimentCreate): Promise<ExperimentView> {
      checkBody(body);
      await checkTargetingRules(body.targeting_rules);
      const sequentialEnabled = body.sequential_testing_enabled ?? false;
      const bayesianEnabled = body.bayesian_enabled ?? false;
      return insert(
        actor,
        {
          key: body.key,
          name: body.name,
          description: body.description ?? null,
          hypothesis: body.hypothesis ?? null,
          experimentType: body.experiment_type ?? 'a_b',
          targetingRules: body.targeting_rules ?? null,
          correctionMethod: body.correction_method ?? 'benjamini_hochberg',
          confidenceLevel: body.confidence_level ?? 0.95,
          sequentialTestingEnabled: sequentialEnabled,
          sequentialTestingConfig: completeConfig(body.sequential_testing_config, sequentialEnabled, null, SEQUENTIAL_DEFAULTS),
          varianceReductionConfig: body.variance_reduction_config ?? null,
          bayesianEnabled,
          bayesianConfig: completeConfig(body.bayesian_config, bayesianEnabled, null, BAYESIAN_DEFAULTS),
          splitUrlConfig: splitUrlConfig(body.split_url_config) ?? null,
        },
        body.variants.map(variantFields),
        body.metrics.map(metricFields),
        null,
      );
    },

    /** PUT: any fields; sent metrics replace the stored ones. Statistical settings and identity are fixed after draft. */
    async update(actor: Actor, id: string, body: ExperimentUpdate): Promise<ExperimentView> {
      checkBody(body);
      await checkTargetingRules(body.targeting_rules);
      const result = await keyUnique(() =>
        db.transaction(async (tx) => {
          const row = await locked(tx, id);
          if (body.status !== undefined && body.status !== row.status) throw new Conflict(statusChangeRefused(row.status));
          if (row.status !== 'draft') await refuseFixedFields(tx, row, body);
          if (body.key !== undefined && body.key !== row.key && (await store.takenKeys(tx, [body.key])).size) {
            throw new Conflict(KEY_TAKEN);
          }
          const sequentialEnabled = body.sequential_testing_enabled ?? row.sequentialTestingEnabled;
          const bayesianEnabled = body.bayesian_enabled ?? row.bayesianEnabled;
          const change: store.ExperimentChange = {
            ...scheduleChange(row, body),
            name: body.name,
            key: body.key,
            description: body.description,
            hypothesis: body.hypothesis,
            experimentType: body.experiment_type,
            targetingRules: body.targeting_rules,
            correctionMethod: body.correction_method,
            confidenceLevel: body.confidence_level,
            sequentialTestingEnabled: sequentialEnabled,
            sequentialTestingConfig: completeConfig(
              body.sequential_testing_config,
              sequentialEnabled,
              row.sequentialTestingConfig,
              SEQUENTIAL_DEFAULTS,
            ),
            varianceReductionConfig: body.variance_reduction_config,
            bayesianEnabled,
            bayesianConfig: completeConfig(body.bayesian_config, bayesianEnabled, row.bayesianConfig, BAYESIAN_DEFAULTS),
            splitUrlConfig: splitUrlConfig(body.split_url_config),
            updatedAt: clock.now(),
          };
          const updated = await store.updateExperiment(tx, id, change);
          const variantsChanged = row.status === 'draft' ? body.variants?.map(variantFields) : undefined;
          await writeChildren(tx, id, variantsChanged, body.metrics?.map(metricFields));
          await audit.record(tx, who(actor), {
            action: 'experiment_update',
            entityType: 'experiment',
            entityId: id,
            before: { key: row.key, name: row.name, status: row.status },
            after: { key: updated.key, name: updated.name, status: updated.status },
            details: { fields: Object.keys(body).sort() },
          });
          return view(updated, tx);
        }),
      );
      await changed(id);
      return result;
    },

    async delete(actor: Actor, id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await locked(tx, id);
        transition('delete', row.status);
        await audit.record(tx, who(actor), {
          action: 'experiment_delete',
          entityType: 'experiment',
          entityId: id,
          before: { key: row.key, name: row.name, status: row.status },
        });
        await store.deleteExperiment(tx, id);
      });
      await changed(id);
    },

    async schedule(actor: Actor, id: string, body: ExperimentSchedule): Promise<ExperimentView> {
      const result = await db.transaction(async (tx) => {
        const row = await locked(tx, id);
        const change = scheduleChange(row, body);
        const updated = await store.updateExperiment(tx, id, { ...change, updatedAt: clock.now() });
        await audit.record(tx, who(actor), {
          action: 'experiment_schedule',
          entityType: 'experiment',
          entityId: id,
          before: { start_date: row.startDate, end_date: row.endDate },
          after: { start_date: updated.startDate, end_date: updated.endDate },
        });
        return view(updated, tx);
      });
      await changed(id);
      return result;
    },

    /** draft -> active (start_date now unless a scheduled start already passed); paused -> active (start_date kept). */
    start: (actor: Actor, id: string) =>
      move(actor, id, 'start', (tx, row, to) => {
        if (row.status === 'paused') return store.updateExperiment(tx, id, { status: to, updatedAt: clock.now() });
        const now = isoMicros(clock.now());
        if (row.endDate && row.endDate <= now) throw new Conflict(END_DATE_PASSED);
        const startDate = row.startDate && row.startDate <= now ? row.startDate : now;
        return store.updateExperiment(tx, id, { status: to, startDate, updatedAt: clock.now() });
      }),

    pause: (actor: Actor, id: string) =>
      move(actor, id, 'pause', (tx, _row, to) => store.updateExperiment(tx, id, { status: to, updatedAt: clock.now() })),

    /** Ends now; a start_date after now becomes one microsecond before the end (spec, Experiment status). */
    complete: (actor: Actor, id: string) =>
      move(actor, id, 'complete', (tx) => store.completeExperiment(tx, id, isoMicros(clock.now()), clock.now())),

    archive: (actor: Actor, id: string) =>
      move(actor, id, 'archive', (tx, _row, to) => store.updateExperiment(tx, id, { status: to, updatedAt: clock.now() })),

    /** A new draft with the source's settings, variants, metrics (expected_effect included) and rules; new unique key. */
    async clone(actor: Actor, id: string): Promise<ExperimentView> {
      const source = await store.findExperiment(db, id);
      if (!source) throw new NotFound(EXPERIMENT_NOT_FOUND);
      checkBody({ experiment_type: source.experimentType });
      const segmentIds = collectSegmentIds(source.targetingRules);
      if (segmentIds.length && (await deps.segments.unusableSegmentIds(segmentIds)).length) {
        throw new Conflict(CLONE_SEGMENT_NOT_USABLE);
      }
      const [variants, metrics] = await Promise.all([store.listVariants(db, [id]), store.listMetrics(db, [id])]);
      const strip = <T extends { id: string; experimentId: string; createdAt: Date }>({ id: _i, experimentId: _e, createdAt: _c, ...rest }: T) => rest;
      return insert(
        actor,
        {
          key: await freeCloneKey(source.key),
          name: `${source.name} (copy)`.slice(0, 255),
          description: source.description,
          hypothesis: source.hypothesis,
          experimentType: source.experimentType,
          targetingRules: source.targetingRules,
          correctionMethod: source.correctionMethod,
          confidenceLevel: source.confidenceLevel,
          sequentialTestingEnabled: source.sequentialTestingEnabled,
          sequentialTestingConfig: source.sequentialTestingConfig,
          varianceReductionConfig: source.varianceReductionConfig,
          bayesianEnabled: source.bayesianEnabled,
          bayesianConfig: source.bayesianConfig,
          splitUrlConfig: source.splitUrlConfig,
        },
        variants.map(strip),
        metrics.map(strip),
        { cloned_from: id },
      );
    },

    /** POST /metadata: annotations merged into the stored object (a null value removes that key). */
    async annotate(actor: Actor, id: string, annotations: Record<string, unknown>): Promise<ExperimentView> {
      const result = await db.transaction(async (tx) => {
        const row = await locked(tx, id);
        const merged: Record<string, unknown> = { ...(row.metadata ?? {}) };
        for (const [k, v] of Object.entries(annotations)) {
          if (v === null) delete merged[k];
          else merged[k] = v;
        }
        const updated = await store.updateExperiment(tx, id, { metadata: merged, updatedAt: clock.now() });
        await audit.record(tx, who(actor), {
          action: 'experiment_metadata_update',
          entityType: 'experiment',
          entityId: id,
          details: { keys: Object.keys(annotations).sort() },
        });
        return view(updated, tx);
      });
      await changed(id);
      return result;
    },

    /** Scheduler job: drafts whose start_date has come become active, start_date kept. */
    async startScheduled(now: Date): Promise<void> {
      const at = isoMicros(now);
      await eachDue(await store.dueIds(db, 'draft', 'startDate', at), (id) =>
        moveIfStillDue(
          id,
          'start',
          (row) => row.status === 'draft' && row.startDate !== null && row.startDate <= at,
          (tx, _row, to) => store.updateExperiment(tx, id, { status: to, updatedAt: clock.now() }),
        ),
      );
    },

    /** Scheduler job: active experiments whose end_date passed are completed at that end_date. */
    async completeEnded(now: Date): Promise<void> {
      const at = isoMicros(now);
      await eachDue(await store.dueIds(db, 'active', 'endDate', at), (id) =>
        moveIfStillDue(
          id,
          'complete',
          (row) => row.status === 'active' && row.endDate !== null && row.endDate <= at,
          (tx, row) => store.completeExperiment(tx, id, row.endDate!, clock.now()),
        ),
      );
    },

    /** For tracking: the experiment with this key as assignment needs it, whatever its status (the caller checks). */
    findAssignable: async (key: string) => assignable(await store.findExperimentByKey(db, key)),

    /**
     * For results: the latest Bayesian decision, stored for the experiment's responses. It is a computed value, not
     * an edit: updated_at stays and no change is announced (the results cache is keyed on updated_at).
     */
    async recordBayesianDecision(id: string, decision: ExperimentView['bayesian_decision']): Promise<void> {
      await store.setBayesianDecision(db, id, decision ?? null);
      if (cache) await cache.delete(detailKey(id));
    },

    /** Read model for export: experiments created in a period, a page at a time; their variants; period counts. */
    exportPage: (period: CreatedPeriod, cursor?: Cursor) => store.exportPage(db, period, cursor),
    exportRecord: (id: string) => store.findExportRecord(db, id),
    exportVariants: (experimentIds: string[]) => store.exportVariants(db, experimentIds),
    periodSummary: (period: CreatedPeriod) => store.periodSummary(db, period),

    /** For tracking: as findAssignable, by id. */
    findAssignableById: async (id: string) => assignable(await store.findExperiment(db, id)),

    /** For tracking: the experiment a variant belongs to. */
    experimentOfVariant: (variantId: string) => store.experimentIdOfVariant(db, variantId),

    /** For segments: draft, active and paused experiments whose targeting rules name the segment (spec: in use). */
    async experimentsUsingSegment(segmentId: string): Promise<Array<{ id: string; key: string; name: string; status: ExperimentStatus }>> {
      const rows = await store.experimentsWithRulesMentioning(db, LIVE_STATUSES, segmentId);
      return rows
        .filter((r) => collectSegmentIds(r.targetingRules).includes(segmentId))
        .map((r) => ({ id: r.id, key: r.key, name: r.name, status: r.status }));
    },

    /** For mutual exclusion groups: id, key, name and status of existing experiments among `ids`. */
    async summaries(ids: string[]): Promise<Array<{ id: string; key: string; name: string; status: ExperimentStatus }>> {
      const rows = await store.findExperiments(db, ids);
      return rows.map((r) => ({ id: r.id, key: r.key, name: r.name, status: r.status }));
    },
  };

  async function assignable(row: ExperimentRow | undefined): Promise<AssignableExperiment | undefined> {
    if (!row) return undefined;
    const [variants, group] = await Promise.all([store.listVariants(db, [row.id]), deps.exclusionGroupOf(row.id)]);
    return {
      id: row.id,
      key: row.key,
      name: row.name,
      status: row.status,
      experimentType: row.experimentType,
      variants: variants.map((v) => ({
        id: v.id,
        name: v.name,
        isControl: v.isControl,
        trafficAllocation: v.trafficAllocation,
        configuration: v.configuration,
      })),
      targetingRules: row.targetingRules,
      mutualExclusionGroup: group,
    };
  }

  /** A sent split_url_config, normalised by the split URL module where it is served (undefined: not sent). */
  function splitUrlConfig(value: Record<string, unknown> | null | undefined): Record<string, unknown> | null | undefined {
    if (value === undefined || value === null || !deps.splitUrl) return value;
    return deps.splitUrl.normalise(value, ['body', 'split_url_config']);
  }

  /** `<key>-copy`, else `<key>-copy-2`, `-3`, ...: the first key no experiment uses, within the key length limit. */
  async function freeCloneKey(sourceKey: string): Promise<string> {
    for (let batch = 0; ; batch++) {
      const candidates = Array.from({ length: 20 }, (_, i) => {
        const n = batch * 20 + i + 1;
        const suffix = n === 1 ? '-copy' : `-copy-${n}`;
        return sourceKey.slice(0, KEY_MAX_LENGTH - suffix.length) + suffix;
      });
      const taken = await store.takenKeys(db, candidates);
      const free = candidates.find((c) => !taken.has(c));
      if (free) return free;
    }
  }

  /** Runs `fn` for every id; one experiment's failure does not stop the others, but fails the job run. */
  async function eachDue(ids: string[], fn: (id: string) => Promise<unknown>): Promise<void> {
    const failures: unknown[] = [];
    for (const id of ids) {
      await fn(id).catch((error: unknown) => failures.push(error));
    }
    if (failures.length) {
      throw new Error(`${failures.length} of ${ids.length} experiments failed: ${(failures[0] as Error).message}`);
    }
  }
}
