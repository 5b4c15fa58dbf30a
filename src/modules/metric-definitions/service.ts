import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/client.js';
import type { CreatedPeriod, Cursor } from '../../db/paging.js';
import { isUniqueViolation } from '../../db/errors.js';
import type {
  MetricAggregate,
  MetricCapping,
  MetricDefinitionRow,
  MetricEventAggregate,
  MetricKind,
} from '../../db/schema/metric-definitions.js';
import type { DefinitionSettings } from '../../analysis/types.js';
import type { AuditActor, AuditLog } from '../../platform/audit.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict, NotFound, Unprocessable, type ValidationIssue } from '../../platform/errors.js';
import type { ExperimentSummary } from '../experiments/read-model.js';
import type { ScheduleSummary } from '../rollout-schedules/read-model.js';
import type {
  MetricDefinitionCreate,
  MetricDefinitionListQuery,
  MetricDefinitionUpdate,
  MetricDefinitionView,
} from './schemas.js';
import * as store from './store.js';

export const METRIC_DEFINITION_NOT_FOUND = 'Metric definition not found';
export const NAME_TAKEN = 'A metric definition with this name already exists';
export const DEFINITION_IN_USE = 'Metric definition is used by a running experiment; complete the experiment or remove the metric from it first';
export const DEFINITION_GUARDS_SCHEDULE =
  "Metric definition is a guardrail of an open rollout schedule; cancel the schedule or remove the guardrail from it first";
export const KIND_GUARDS_SCHEDULE =
  "Metric definition is a guardrail of an open rollout schedule, and guardrails take mean and ratio definitions only; remove the guardrail before changing the kind";
export const UNKNOWN_DEFINITION = 'Value error, Unknown metric definition';
export const guardrailKindRefused = (kind: MetricKind) =>
  `Value error, a guardrail takes a mean or ratio metric definition; this one is a ${kind} metric (no sequential guardrail test is defined for it)`;
/** The kinds a rollout schedule's guardrail may name (src/analysis/definition-guardrails.ts). */
const GUARDRAIL_KINDS = new Set<MetricKind>(['mean', 'ratio']);
export const CAPPING_NOT_FOR_KIND = 'Value error, capping applies to mean and ratio metrics only';
const notUsedBy = (field: string, kind: MetricKind) => `Value error, ${field} is not used by ${kind} metrics`;
const notUsedByCapping = (field: string, type: MetricCapping['type']) => `Value error, ${field} is not used by ${type} capping`;

/** Experiments in these states block deleting a definition they use: their analyses still read it. */
const RUNNING_STATUSES = new Set(['active', 'paused']);
const NO_CAPPING: MetricCapping = { type: 'none' };
/** The event fields of each kind; any other is refused (422 at its loc). */
const KIND_FIELDS: Record<MetricKind, readonly KindField[]> = {
  proportion: ['event_name'],
  mean: ['event_name', 'aggregate'],
  ratio: ['numerator', 'denominator'],
  quantile: ['event_name', 'aggregate', 'quantile'],
};
const KIND_FIELD_NAMES = ['event_name', 'aggregate', 'numerator', 'denominator', 'quantile'] as const;
type KindField = (typeof KIND_FIELD_NAMES)[number];
const takesCapping = (kind: MetricKind) => kind === 'mean' || kind === 'ratio';

/** What a definition says to analyse: its kind, the fields of that kind, and the capping. */
interface Analysis {
  kind: MetricKind;
  event_name: string | null;
  aggregate: MetricAggregate | null;
  numerator: MetricEventAggregate | null;
  denominator: MetricEventAggregate | null;
  quantile: number | null;
  capping: MetricCapping;
}

export interface MetricDefinitionsDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  /** The experiments module's read model: experiments with a metric naming the definition (read in the caller's transaction). */
  experiments: { experimentsUsingMetricDefinition(definitionId: string, db: Executor): Promise<ExperimentSummary[]> };
  /** The rollout schedules module's read model: open schedules with a guardrail naming the definition (the caller's transaction). */
  schedules?: { schedulesGuardedByMetricDefinition(definitionId: string, db: Executor): Promise<ScheduleSummary[]> };
}

export type MetricDefinitionsService = ReturnType<typeof createMetricDefinitionsService>;

export function toMetricDefinitionView(row: MetricDefinitionRow): MetricDefinitionView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    ...rowAnalysis(row),
    higher_is_better: row.higherIsBetter,
    tags: row.tags,
    owner: row.owner,
    created_by: row.createdBy,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** Only the field its type uses (the schema allows both optional fields on one object). */
function cappingIssues(capping: { type: MetricCapping['type']; value?: number; p?: number }): ValidationIssue[] {
  const loc = (field: string) => ['body', 'capping', field];
  const issues: ValidationIssue[] = [];
  const needs = capping.type === 'absolute' ? 'value' : capping.type === 'percentile' ? 'p' : null;
  for (const field of ['value', 'p'] as const) {
    if (field === needs && capping[field] === undefined) issues.push({ type: 'missing', loc: loc(field), msg: 'Field required' });
    if (field !== needs && capping[field] !== undefined) issues.push({ type: 'value_error', loc: loc(field), msg: notUsedByCapping(field, capping.type) });
  }
  return issues;
}

function normaliseCapping(capping: { type: MetricCapping['type']; value?: number; p?: number }): MetricCapping {
  if (capping.type === 'absolute') return { type: 'absolute', value: capping.value! };
  if (capping.type === 'percentile') return { type: 'percentile', p: capping.p! };
  return NO_CAPPING;
}

/** The kind's own fields present, every other event field absent, capping only where the kind takes it. */
function analysisIssues(a: Analysis): ValidationIssue[] {
  const wanted = KIND_FIELDS[a.kind];
  const issues: ValidationIssue[] = [];
  for (const field of KIND_FIELD_NAMES) {
    const present = a[field] !== null;
    if (wanted.includes(field) && !present) issues.push({ type: 'missing', loc: ['body', field], msg: 'Field required' });
    if (!wanted.includes(field) && present) issues.push({ type: 'value_error', loc: ['body', field], msg: notUsedBy(field, a.kind) });
  }
  if (!takesCapping(a.kind) && a.capping.type !== 'none') {
    issues.push({ type: 'value_error', loc: ['body', 'capping'], msg: CAPPING_NOT_FOR_KIND });
  }
  return issues;
}

function rowAnalysis(row: MetricDefinitionRow): Analysis {
  return {
    kind: row.kind,
    event_name: row.eventName,
    aggregate: row.aggregate,
    numerator: row.numerator,
    denominator: row.denominator,
    quantile: row.quantile,
    capping: row.capping,
  };
}

/** The stored columns of an analysis (the inverse of rowAnalysis). */
function analysisColumns(a: Analysis) {
  return {
    kind: a.kind,
    eventName: a.event_name,
    aggregate: a.aggregate,
    numerator: a.numerator,
    denominator: a.denominator,
    quantile: a.quantile,
    capping: a.capping,
  };
}

/** The definition a create or update asks for: sent fields over `base`; 422 listing every problem. */
function analysisOf(body: MetricDefinitionUpdate, base: Analysis): Analysis {
  const capIssues = body.capping ? cappingIssues(body.capping) : [];
  const analysis: Analysis = {
    kind: body.kind ?? base.kind,
    event_name: body.event_name ?? base.event_name,
    aggregate: body.aggregate ?? base.aggregate,
    numerator: body.numerator ?? base.numerator,
    denominator: body.denominator ?? base.denominator,
    quantile: body.quantile ?? base.quantile,
    capping: body.capping && capIssues.length === 0 ? normaliseCapping(body.capping) : base.capping,
  };
  const issues = [...capIssues, ...analysisIssues(analysis)];
  if (issues.length) throw new Unprocessable(issues);
  return analysis;
}

const EMPTY: Omit<Analysis, 'kind'> = {
  event_name: null,
  aggregate: null,
  numerator: null,
  denominator: null,
  quantile: null,
  capping: NO_CAPPING,
};

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function createMetricDefinitionsService(deps: MetricDefinitionsDeps) {
  const { db, audit, clock } = deps;

  /** A name taken by a concurrent request between the check and the write is a 409 too, not a 500. */
  async function nameUnique<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error)) throw new Conflict(NAME_TAKEN);
      throw error;
    }
  }

  /** Open rollout schedules guarding on the definition, read after the definition's row lock (see `remove`). */
  const guardedSchedules = async (tx: Executor, id: string) =>
    (await deps.schedules?.schedulesGuardedByMetricDefinition(id, tx)) ?? [];

  return {
    async list(q: MetricDefinitionListQuery): Promise<MetricDefinitionView[]> {
      return (await store.listDefinitions(db, q)).map(toMetricDefinitionView);
    },

    /**
     * For results: what each of the definitions says to analyse, as stored now (with its version); ids that no longer
     * exist are left out (their metrics are analysed as spelled out).
     */
    async analysisSettings(ids: string[]): Promise<DefinitionSettings[]> {
      return (await store.findDefinitions(db, [...new Set(ids)])).map((row) => ({
        id: row.id,
        name: row.name,
        version: row.version,
        kind: row.kind,
        value: row.eventName === null ? null : { event_name: row.eventName, aggregate: row.aggregate ?? 'count' },
        numerator: row.numerator,
        denominator: row.denominator,
        quantile: row.quantile,
        capping: row.capping,
      }));
    },

    /**
     * For export: definitions created in the period, a page at a time in (created_at, id) order, as the API shows
     * them but with created_at and updated_at as stored (UTC, no offset, microseconds); `createdAt` is the page cursor.
     */
    async exportPage(period: CreatedPeriod, cursor?: Cursor): Promise<Array<MetricDefinitionView & { createdAt: string }>> {
      return (await store.exportPage(db, period, cursor)).map(({ createdText, updatedText, ...row }) => ({
        ...toMetricDefinitionView(row), created_at: createdText, updated_at: updatedText, createdAt: createdText,
      }));
    },

    async get(id: string): Promise<MetricDefinitionView> {
      const row = await store.findDefinition(db, id);
      if (!row) throw new NotFound(METRIC_DEFINITION_NOT_FOUND);
      return toMetricDefinitionView(row);
    },

    async create(actor: AuditActor, body: MetricDefinitionCreate): Promise<MetricDefinitionView> {
      const analysis = analysisOf(body, { kind: body.kind, ...EMPTY });
      const row = await nameUnique(() =>
        db.transaction(async (tx) => {
          if (await store.nameTaken(tx, body.name)) throw new Conflict(NAME_TAKEN);
          const now = clock.now();
          const inserted = await store.insertDefinition(tx, {
            id: randomUUID(),
            name: body.name,
            description: body.description ?? null,
            ...analysisColumns(analysis),
            higherIsBetter: body.higher_is_better ?? true,
            tags: body.tags ?? [],
            owner: body.owner === undefined ? actor.username : body.owner,
            createdBy: actor.id,
            version: 1,
            createdAt: now,
            updatedAt: now,
          });
          await audit.record(tx, actor, {
            action: 'metric_definition_create',
            entityType: 'metric_definition',
            entityId: inserted.id,
            after: { name: inserted.name, kind: inserted.kind, version: inserted.version },
          });
          return inserted;
        }),
      );
      return toMetricDefinitionView(row);
    },

    /**
     * Fields left out keep their value. A new kind starts from no event fields (the old kind's would be refused) and
     * keeps the capping only when the new kind takes one. Any change adds one to `version`.
     */
    async update(actor: AuditActor, id: string, body: MetricDefinitionUpdate): Promise<MetricDefinitionView> {
      const row = await nameUnique(() =>
        db.transaction(async (tx) => {
          const current = await store.findDefinitionForUpdate(tx, id);
          if (!current) throw new NotFound(METRIC_DEFINITION_NOT_FOUND);
          const stored = rowAnalysis(current);
          const kind = body.kind ?? current.kind;
          const base = kind === current.kind ? stored : { kind, ...EMPTY, capping: takesCapping(kind) ? stored.capping : NO_CAPPING };
          const analysis = analysisOf(body, base);
          if (kind !== current.kind && !GUARDRAIL_KINDS.has(kind)) {
            const guarded = await guardedSchedules(tx, id);
            if (guarded.length) throw new Conflict({ code: 'metric_definition_guards_schedule', message: KIND_GUARDS_SCHEDULE, rollout_schedules: guarded });
          }
          if (body.name !== undefined && body.name !== current.name && (await store.nameTaken(tx, body.name, id))) {
            throw new Conflict(NAME_TAKEN);
          }
          const next = {
            name: body.name ?? current.name,
            description: body.description === undefined ? current.description : body.description,
            ...analysisColumns(analysis),
            higherIsBetter: body.higher_is_better ?? current.higherIsBetter,
            tags: body.tags ?? current.tags,
            owner: body.owner === undefined ? current.owner : body.owner,
          };
          const before: Record<string, unknown> = {};
          const after: Record<string, unknown> = {};
          for (const [field, value] of Object.entries(next) as [keyof typeof next, unknown][]) {
            if (same(value, current[field])) continue;
            before[field] = current[field];
            after[field] = value;
          }
          if (Object.keys(after).length === 0) return current;
          const updated = await store.updateDefinition(tx, id, { ...next, version: current.version + 1, updatedAt: clock.now() });
          await audit.record(tx, actor, {
            action: 'metric_definition_update',
            entityType: 'metric_definition',
            entityId: id,
            before: { ...before, version: current.version },
            after: { ...after, version: updated.version },
          });
          return updated;
        }),
      );
      return toMetricDefinitionView(row);
    },

    /**
     * 409 naming the active and paused experiments that use the definition, read after taking the definition's row
     * for update: an experiment write naming it share-locks it (`checkReferences`), so it either committed before and
     * is seen here, or waits and then finds the definition gone. Other experiments keep their metric as spelled out
     * (the reference is cleared by the foreign key).
     */
    async remove(actor: AuditActor, id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const current = await store.findDefinitionForUpdate(tx, id);
        if (!current) throw new NotFound(METRIC_DEFINITION_NOT_FOUND);
        const running = (await deps.experiments.experimentsUsingMetricDefinition(id, tx)).filter((e) => RUNNING_STATUSES.has(e.status));
        const guarded = await guardedSchedules(tx, id);
        if (running.length || guarded.length) {
          throw new Conflict({
            code: 'metric_definition_in_use',
            message: running.length ? DEFINITION_IN_USE : DEFINITION_GUARDS_SCHEDULE,
            experiments: running.map(({ id: experimentId, key, name, status }) => ({ id: experimentId, key, name, status })),
            ...(guarded.length ? { rollout_schedules: guarded } : {}),
          });
        }
        await store.deleteDefinition(tx, id);
        await audit.record(tx, actor, {
          action: 'metric_definition_delete',
          entityType: 'metric_definition',
          entityId: id,
          before: { name: current.name, kind: current.kind, version: current.version },
        });
      });
    },

    /**
     * For the experiments service, in the transaction that writes the metrics: 422 at
     * `<loc>.<i>.metric_definition_id` for every metric naming a definition that does not exist. The existing ones
     * stay share-locked until that transaction commits (see `remove`).
     */
    async checkReferences(
      tx: Executor,
      metrics: readonly { metric_definition_id?: string | null }[] | undefined,
      loc: (string | number)[],
    ): Promise<void> {
      const ids = [...new Set((metrics ?? []).map((m) => m.metric_definition_id).filter((v): v is string => typeof v === 'string'))];
      if (ids.length === 0) return;
      const known = await store.existingIdsForShare(tx, ids);
      const issues = (metrics ?? []).flatMap((m, i): ValidationIssue[] =>
        typeof m.metric_definition_id === 'string' && !known.has(m.metric_definition_id)
          ? [{ type: 'value_error', loc: [...loc, i, 'metric_definition_id'], msg: UNKNOWN_DEFINITION }]
          : [],
      );
      if (issues.length) throw new Unprocessable(issues);
    },

    /**
     * For the rollout schedules service, in the transaction that writes a schedule's guardrails: 422 at
     * `<loc>.<i>.metric_definition_id` for each guardrail naming a definition that does not exist or is not a mean or
     * ratio metric. The named ones stay share-locked until that transaction commits, so a concurrent delete (or kind
     * change) either sees the schedule or is seen by it.
     */
    async checkGuardrailDefinitions(
      tx: Executor,
      metrics: readonly { metric_definition_id?: string }[],
      loc: (string | number)[],
    ): Promise<void> {
      const ids = [...new Set(metrics.flatMap((m) => (m.metric_definition_id === undefined ? [] : [m.metric_definition_id])))];
      if (ids.length === 0) return;
      const kinds = await store.existingIdsForShare(tx, ids);
      const issues = metrics.flatMap((m, i): ValidationIssue[] => {
        if (m.metric_definition_id === undefined) return [];
        const kind = kinds.get(m.metric_definition_id);
        const at = [...loc, i, 'metric_definition_id'];
        if (kind === undefined) return [{ type: 'value_error', loc: at, msg: UNKNOWN_DEFINITION }];
        return GUARDRAIL_KINDS.has(kind) ? [] : [{ type: 'value_error', loc: at, msg: guardrailKindRefused(kind), ctx: { kind } }];
      });
      if (issues.length) throw new Unprocessable(issues);
    },
  };
}
