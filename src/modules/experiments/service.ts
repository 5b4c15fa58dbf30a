import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/client.js';
import type { ExperimentRow } from '../../db/schema/experiments.js';
import type { AuditActor, AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Bus } from '../../platform/bus.js';
import type { Cache } from '../../platform/cache.js';
import type { Clock } from '../../platform/clock.js';
import { BadRequest, Conflict, NotFound } from '../../platform/errors.js';
import { EXPERIMENT_NOT_FOUND, EXPERIMENTS_CHANGED } from './domain.js';
import { createLifecycle, statusChangeRefused, transition } from './lifecycle.js';
import { createBodyChecks, SPLIT_URL_NOT_AVAILABLE, type SegmentUsability } from './checks.js';
import { BAYESIAN_DEFAULTS, completeConfig, SEQUENTIAL_DEFAULTS } from './rules.js';
// The body rules, for other modules that check an experiment body (wizard).
export { metricIssues, variantIssues } from './rules.js';
import {
  KEY_MAX_LENGTH,
  type ExperimentCreate,
  type ExperimentListQuery,
  type ExperimentSchedule,
  type ExperimentUpdate,
  type ExperimentView,
} from './schemas.js';
import * as store from './store.js';
import { toExperimentView } from './view.js';
import { ascendingIds, fieldLocked, metricFields, sameVariants, scheduleChange, variantFields, type MetricFields, type VariantFields } from './fields.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { MetricDefinitionsService } from '../metric-definitions/service.js';

export { EXPERIMENT_NOT_FOUND };
export const KEY_TAKEN = 'An experiment with this key already exists';
export { SPLIT_URL_NOT_AVAILABLE };
export const CLONE_SEGMENT_NOT_USABLE =
  'Cannot clone: the targeting rules name a segment that is unknown, inactive, archived or has invalid rules';
export { END_DATE_PASSED } from './lifecycle.js';
export { END_BEFORE_START, fieldLocked } from './fields.js';

/** Spec "Caching": experiment detail is cached one hour when CACHE_ENABLED is on, and cleared on every change. */
export const DETAIL_TTL_SECONDS = 3_600;
const detailKey = (id: string) => `experiment:${id}`;
/** Announced (with the experiment id) after every change, so caches in every process (detail, tracking) drop it. */
export { EXPERIMENTS_CHANGED };

export type { SegmentUsability };

export interface ExperimentsDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  bus: Bus;
  /** Present when CACHE_ENABLED is on. */
  cache: Cache | undefined;
  segments: SegmentUsability;
  /** The metric library: 422 for metrics naming an unknown definition, asked in the transaction that writes them. */
  metricDefinitions: Pick<MetricDefinitionsService, 'checkReferences'>;
  users: { owner(id: string): Promise<{ name: string | null } | undefined> };
  /**
   * The split URL module (full profile only, second spec document): validates and normalises split_url_config.
   * Absent in core, where creating a split_url experiment is 501 and a configuration is stored as sent.
   */
  splitUrl: { normalise(value: unknown, loc: (string | number)[]): Record<string, unknown> } | undefined;
  /** Alerts subscribers (notification preferences) after a start or completion has committed; never rejects. */
  notifications?: {
    notify(kind: 'experiment_started' | 'experiment_completed', payload: { experiment_id: string; experiment_name: string }): Promise<unknown>;
  };
}

export type ExperimentsService = ReturnType<typeof createExperimentsService>;

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

  const { checkTargetingRules, segmentsUsable, checkSegments, checkBody } = createBodyChecks(deps);

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

  /** Inserts an experiment with its variants and metrics; `checkRules` refuses its rules' segments in the same transaction. */
  async function insert(
    actor: Actor,
    values: Omit<store.ExperimentInsert, 'id' | 'createdAt' | 'updatedAt' | 'ownerId' | 'status'>,
    variants: VariantFields[],
    metrics: MetricFields[],
    details: Record<string, unknown> | null,
    checkRules: (tx: Executor) => Promise<void>,
  ): Promise<ExperimentView> {
    return keyUnique(() =>
      db.transaction(async (tx) => {
        await checkRules(tx);
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

  const lifecycle = createLifecycle({ db, audit, clock, notifications: deps.notifications, locked, view, changed });

  return {
    ...lifecycle,

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

    /**
     * GET detail with owner_name; cached when CACHE_ENABLED is on. The owner is read on every call, cached or not:
     * accounts change and go away without touching the experiment (its owner_id then turns null in the database).
     */
    async get(id: string): Promise<ExperimentView> {
      let detail = cache && (await cache.get<ExperimentView>(detailKey(id)));
      if (!detail) {
        const row = await store.findExperiment(db, id);
        if (!row) throw new NotFound(EXPERIMENT_NOT_FOUND);
        detail = await view(row);
        if (cache) await cache.set(detailKey(id), detail, DETAIL_TTL_SECONDS);
      }
      const owner = detail.owner_id ? await deps.users.owner(detail.owner_id) : undefined;
      return { ...detail, owner_id: owner ? detail.owner_id : null, owner_name: owner?.name ?? null };
    },

    async create(actor: Actor, body: ExperimentCreate): Promise<ExperimentView> {
      checkBody(body);
      checkTargetingRules(body.targeting_rules);
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
        async (tx) => {
          await checkSegments(tx, body.targeting_rules);
          await deps.metricDefinitions.checkReferences(tx, body.metrics, ['body', 'metrics']);
        },
      );
    },

    /** PUT: any fields; sent metrics replace the stored ones. Statistical settings and identity are fixed after draft. */
    async update(actor: Actor, id: string, body: ExperimentUpdate): Promise<ExperimentView> {
      checkBody(body);
      checkTargetingRules(body.targeting_rules);
      const result = await keyUnique(() =>
        db.transaction(async (tx) => {
          await checkSegments(tx, body.targeting_rules);
          await deps.metricDefinitions.checkReferences(tx, body.metrics, ['body', 'metrics']);
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

    /** A new draft with the source's settings, variants, metrics (expected_effect included) and rules; new unique key. */
    async clone(actor: Actor, id: string): Promise<ExperimentView> {
      const source = await store.findExperiment(db, id);
      if (!source) throw new NotFound(EXPERIMENT_NOT_FOUND);
      checkBody({ experiment_type: source.experimentType });
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
        async (tx) => {
          if (!(await segmentsUsable(tx, source.targetingRules))) throw new Conflict(CLONE_SEGMENT_NOT_USABLE);
        },
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

    /**
     * For results: the latest Bayesian decision, stored for the experiment's responses. It is a computed value, not
     * an edit: updated_at stays and no change is announced (the results cache is keyed on updated_at).
     */
    async recordBayesianDecision(id: string, decision: ExperimentView['bayesian_decision']): Promise<void> {
      await store.setBayesianDecision(db, id, decision ?? null);
      if (cache) await cache.delete(detailKey(id));
    },
  };

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
}
