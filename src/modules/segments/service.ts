import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/client.js';
import type { SegmentRow, SegmentStatus } from '../../db/schema/segments.js';
import type { AuditActor, AuditLog } from '../../platform/audit.js';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict, NotFound, Unprocessable } from '../../platform/errors.js';
import {
  collectSegmentIds,
  isRuleSetShape,
  ruleSetEvaluator,
  REGEX_OPERATORS,
  regexConditionsExceeded,
  validateSegmentRules,
  type CompiledSegment,
  type EvaluationEnv,
} from '../../targeting/index.js';
import {
  MAX_SEGMENT_MEMBERS,
  type SegmentCreate,
  type SegmentDetail,
  type SegmentEvaluation,
  type SegmentUpdate,
  type SegmentUsage,
  type SegmentUser,
  type SegmentView,
} from './schemas.js';
import * as store from './store.js';
import { assertTargetingContext } from './domain.js';

export const SEGMENT_NOT_FOUND = 'Segment not found';
/** Spec, "Targeting rules": the 422 of a flag or experiment whose rules name a segment that may not be used. */
export const SEGMENT_NOT_USABLE = 'targeting rules: a segment is unknown, inactive, archived or has invalid rules';
export const SEGMENT_IN_USE = 'Segment is used by feature flags or experiments; remove it from their targeting rules first';
export const RULES_NOT_FOR_ID_LIST = 'id_list segments have no rules';
export const MEMBERS_NEED_ID_LIST = 'Members can only be managed on id_list segments';
export const SEGMENT_ARCHIVED = 'This segment is archived; unarchive it before changing its members';
export const TOO_MANY_MEMBERS = `A segment can hold at most ${MAX_SEGMENT_MEMBERS} members`;
export const SEGMENT_RULES_NOT_VALID = 'Segment rules not valid: ';
export const NO_RULES_TO_PREVIEW = 'An id_list segment has no rules to preview';
/** Preview refusals (spec, "Segments"): bounded work before any query. */
export const PREVIEW_REGEX_LIMIT = 500;
export const PREVIEW_NODE_LIMIT = 50_000;
export const PREVIEW_TOO_MANY_REGEX = `regex conditions times sample_size may be at most ${PREVIEW_REGEX_LIMIT}`;
export const PREVIEW_TOO_MANY_NODES = `conditions plus groups times sample_size may be at most ${PREVIEW_NODE_LIMIT}`;

/** Announced after every segment write: compiled flag rulesets in every process drop what they hold. */
export const SEGMENTS_CHANGED = 'segments.changed';

/** Spec, "Segment status": experiments in these states block archiving or deactivating a segment they name. */
const BLOCKING_EXPERIMENT_STATUSES = new Set(['draft', 'active', 'paused']);
/** Where segment routes take the user context (for the 422 of the context limits). */
const USER_CONTEXT = ['body', 'user_context'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A segment as the targeting engine needs it; `valid` is false for rules in an old or broken format. */
export interface SegmentDefinition {
  id: string;
  kind: SegmentRow['kind'];
  status: SegmentStatus;
  rules: unknown;
  valid: boolean;
}

export interface SegmentsDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  bus: Bus;
  /** Every flag whose rules name the segment, with its status (read in the caller's transaction). */
  flags: { flagsUsingSegment(segmentId: string, db: Executor): Promise<SegmentUser[]> };
  /** Every experiment whose rules name the segment, with its status (read in the caller's transaction). */
  experiments: { experimentsUsingSegment(segmentId: string, db: Executor): Promise<SegmentUser[]> };
  /** Recently stored user contexts (of assignments), for preview; none stored means sample_size 0 (no data). */
  tracking: { sampleContexts(limit: number): Promise<unknown[]> };
}

export type SegmentsService = ReturnType<typeof createSegmentsService>;

export function toSegmentView(row: SegmentRow): SegmentView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    kind: row.kind,
    rules: row.rules ?? null,
    status: row.status,
    owner_id: row.ownerId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function toSegmentDetail(row: SegmentRow): SegmentDetail {
  return { ...toSegmentView(row), member_count: row.kind === 'id_list' ? row.memberCount : null };
}

function toDefinition(row: SegmentRow): SegmentDefinition {
  const valid = row.kind === 'id_list' || validateSegmentRules(row.rules) === null;
  return { id: row.id, kind: row.kind, status: row.status, rules: row.rules ?? null, valid };
}

function rulesError(msg: string, type = 'value_error'): Unprocessable {
  return new Unprocessable({ type, loc: ['body', 'rules'], msg });
}

function assertValidRules(rules: unknown): void {
  const problem = validateSegmentRules(rules);
  if (problem) throw rulesError(problem);
}

/** Stored rules that no longer validate (an old format) are kept but never evaluated: 409 with the reason. */
function assertEvaluable(row: SegmentRow): void {
  const problem = row.kind === 'rules' ? validateSegmentRules(row.rules) : null;
  if (problem) throw new Conflict(SEGMENT_RULES_NOT_VALID + problem);
}

export function createSegmentsService(deps: SegmentsDeps) {
  const { db, audit, clock } = deps;
  const announce = (id: string) => deps.bus.publish(SEGMENTS_CHANGED, id).catch(() => undefined);

  async function mustFind(id: string): Promise<SegmentRow> {
    const row = await store.findSegment(db, id);
    if (!row) throw new NotFound(SEGMENT_NOT_FOUND);
    return row;
  }

  /**
   * Spec, "Segment status": 409 naming every non-archived flag and every draft, active or paused experiment. Both are
   * read in the caller's transaction, after it took the segment's row for update: a flag or experiment write naming
   * the segment share-locks it while it checks and writes (`unusableSegmentIds` with its transaction), so either that
   * write committed before and is seen here, or it waits for this transaction and then finds the segment retired.
   */
  async function assertNotInUse(tx: Executor, id: string): Promise<void> {
    const flags = (await deps.flags.flagsUsingSegment(id, tx)).filter((f) => f.status !== 'archived');
    const experiments = (await deps.experiments.experimentsUsingSegment(id, tx)).filter((e) => BLOCKING_EXPERIMENT_STATUSES.has(e.status.toLowerCase()));
    if (flags.length === 0 && experiments.length === 0) return;
    throw new Conflict({
      code: 'segment_in_use',
      message: SEGMENT_IN_USE,
      feature_flags: flags.map(({ id: flagId, key, name }) => ({ id: flagId, key, name })),
      experiments: experiments.map(({ id: expId, key, name, status }) => ({ id: expId, key, name, status })),
    });
  }

  /** Locks the segment and applies the member-route refusals, in the spec's order. */
  async function lockIdList(tx: Executor, id: string): Promise<SegmentRow> {
    const row = await store.findSegmentForUpdate(tx, id);
    if (!row) throw new NotFound(SEGMENT_NOT_FOUND);
    if (row.kind !== 'id_list') throw new Conflict(MEMBERS_NEED_ID_LIST);
    if (row.status === 'archived') throw new Conflict(SEGMENT_ARCHIVED);
    return row;
  }

  async function memberOf(memberId: string, segmentIds: string[]): Promise<Set<string>> {
    return new Set(await store.segmentsHoldingMember(db, memberId, segmentIds));
  }

  /** The segments a ruleset names, ready to compile (missing ids are simply absent). */
  async function definitions(ids: string[]): Promise<SegmentDefinition[]> {
    return (await store.findSegments(db, ids.filter((id) => UUID.test(id)))).map(toDefinition);
  }

  /**
   * The one lookup of id_list membership for targeting (flag evaluation and experiment assignment): an env in which
   * the id_list segments among `defs` answer whether `subject` is a member, asked once for all of
   * `idListSegmentIds` (one indexed probe per segment), and every other segment answers as in `base` (the same
   * definitions compiled without members). No id_list to ask about, or a subject that is not a string, is `base`.
   */
  async function membershipEnv(
    defs: ReadonlyMap<string, SegmentDefinition>,
    idListSegmentIds: string[],
    subject: unknown,
    base: EvaluationEnv,
  ): Promise<EvaluationEnv> {
    if (idListSegmentIds.length === 0 || typeof subject !== 'string') return base;
    const members = await memberOf(subject, idListSegmentIds);
    const isMemberOf = (segmentId: string, memberId: string) => memberId === subject && members.has(segmentId);
    return {
      segments: (id) => {
        const def = defs.get(id);
        if (def?.kind !== 'id_list') return base.segments!(id);
        return compileSegment(def, isMemberOf);
      },
    };
  }

  async function isMember(row: SegmentRow, context: Record<string, unknown>): Promise<SegmentEvaluation> {
    if (row.kind === 'id_list') {
      const userId = context.user_id;
      const member = typeof userId === 'string' && (await memberOf(userId, [row.id])).has(row.id);
      return { segment_id: row.id, is_member: member, matched_rules: [] };
    }
    const { matched, matchedConditions } = ruleSetEvaluator(row.rules).explain(context);
    return { segment_id: row.id, is_member: matched, matched_rules: matched ? matchedConditions : [] };
  }

  return {
    async create(actor: AuditActor, body: SegmentCreate): Promise<SegmentView> {
      const kind = body.kind ?? 'rules';
      if (kind === 'id_list' && body.rules !== undefined) throw rulesError(RULES_NOT_FOR_ID_LIST);
      if (kind === 'rules') {
        if (body.rules === undefined) throw rulesError('Field required', 'missing');
        assertValidRules(body.rules);
      }
      const now = clock.now();
      const row = await db.transaction(async (tx) => {
        const inserted = await store.insertSegment(tx, {
          id: randomUUID(),
          name: body.name,
          description: body.description ?? null,
          kind,
          rules: kind === 'rules' ? body.rules : null,
          status: body.status ?? 'active',
          ownerId: actor.id,
          createdAt: now,
          updatedAt: now,
        });
        await audit.record(tx, actor, {
          action: 'segment_create',
          entityType: 'segment',
          entityId: inserted.id,
          after: { name: inserted.name, kind, status: inserted.status },
        });
        return inserted;
      });
      // No announcement: no flag can name a segment before it exists, so no compiled ruleset holds it.
      return toSegmentView(row);
    },

    async list(query: { status?: SegmentStatus; skip: number; limit: number }): Promise<SegmentView[]> {
      return (await store.listSegments(db, query)).map(toSegmentView);
    },

    async get(id: string): Promise<SegmentDetail> {
      return toSegmentDetail(await mustFind(id));
    },

    async update(actor: AuditActor, id: string, body: SegmentUpdate): Promise<SegmentView> {
      const retiring = body.status === 'inactive' || body.status === 'archived';
      const row = await db.transaction(async (tx) => {
        const current = await store.findSegmentForUpdate(tx, id);
        if (!current) throw new NotFound(SEGMENT_NOT_FOUND);
        if (body.rules !== undefined) {
          if (current.kind === 'id_list') throw rulesError(RULES_NOT_FOR_ID_LIST);
          assertValidRules(body.rules);
        }
        if (retiring) await assertNotInUse(tx, id);
        const before: Record<string, unknown> = {};
        const after: Record<string, unknown> = {};
        const values: Partial<SegmentRow> = {};
        const change = <K extends 'name' | 'description' | 'rules' | 'status'>(field: K, value: SegmentRow[K] | undefined) => {
          if (value === undefined || JSON.stringify(value) === JSON.stringify(current[field])) return;
          values[field] = value;
          before[field] = current[field];
          after[field] = value;
        };
        change('name', body.name);
        change('description', body.description);
        change('rules', body.rules);
        change('status', body.status);
        if (Object.keys(values).length === 0) return current;
        const updated = await store.updateSegment(tx, id, { ...values, updatedAt: clock.now() });
        await audit.record(tx, actor, { action: 'segment_update', entityType: 'segment', entityId: id, before, after });
        return updated;
      });
      await announce(id);
      return toSegmentView(row);
    },

    /** DELETE archives (spec, "Segment status"), refused while the segment is in use. */
    async archive(actor: AuditActor, id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const current = await store.findSegmentForUpdate(tx, id);
        if (!current) throw new NotFound(SEGMENT_NOT_FOUND);
        await assertNotInUse(tx, id);
        if (current.status === 'archived') return;
        await store.updateSegment(tx, id, { status: 'archived', updatedAt: clock.now() });
        await audit.record(tx, actor, {
          action: 'segment_update',
          entityType: 'segment',
          entityId: id,
          before: { status: current.status },
          after: { status: 'archived' },
        });
      });
      await announce(id);
    },

    async evaluate(id: string, context: Record<string, unknown>): Promise<SegmentEvaluation> {
      assertTargetingContext(context, USER_CONTEXT);
      const row = await mustFind(id);
      assertEvaluable(row);
      return isMember(row, context);
    },

    /** Unknown segments and old-format rules answer false (spec: "bulk-evaluate gives false"). */
    async bulkEvaluate(segmentIds: string[], context: Record<string, unknown>): Promise<{ results: Record<string, boolean> }> {
      assertTargetingContext(context, USER_CONTEXT);
      const rows = new Map((await store.findSegments(db, segmentIds)).map((r) => [r.id, r]));
      const userId = context.user_id;
      const idLists = [...rows.values()].filter((r) => r.kind === 'id_list').map((r) => r.id);
      const members = typeof userId === 'string' ? await memberOf(userId, idLists) : new Set<string>();
      const results: Record<string, boolean> = {};
      for (const id of segmentIds) {
        const row = rows.get(id);
        if (!row) results[id] = false;
        else if (row.kind === 'id_list') results[id] = members.has(id);
        else results[id] = validateSegmentRules(row.rules) === null && ruleSetEvaluator(row.rules).evaluate(context);
      }
      return { results };
    },

    async usage(id: string): Promise<SegmentUsage> {
      await mustFind(id);
      const [flags, experiments] = await Promise.all([deps.flags.flagsUsingSegment(id, db), deps.experiments.experimentsUsingSegment(id, db)]);
      return { segment_id: id, experiments, feature_flags: flags };
    },

    async preview(id: string, rulesSent: unknown, sampleSize: number) {
      const row = await mustFind(id);
      // Spec: "An id list segment is 422 on preview with no rules": it has none, and rules sent in the body are
      // not its own, so a match rate computed from them would describe some other segment.
      if (row.kind === 'id_list') throw rulesError(NO_RULES_TO_PREVIEW);
      if (rulesSent === undefined) {
        assertEvaluable(row);
      } else {
        assertValidRules(rulesSent);
      }
      const rules = rulesSent === undefined ? row.rules : rulesSent;
      if (!isRuleSetShape(rules)) throw rulesError(NO_RULES_TO_PREVIEW);
      const conditions = rules.groups.flatMap((g) => g.conditions);
      const regexes = conditions.filter((c) => (REGEX_OPERATORS as readonly string[]).includes(c.operator)).length;
      const tooMuch = (msg: string) => new Unprocessable({ type: 'value_error', loc: ['query', 'sample_size'], msg });
      if (regexes * sampleSize > PREVIEW_REGEX_LIMIT) throw tooMuch(PREVIEW_TOO_MANY_REGEX);
      if ((conditions.length + rules.groups.length) * sampleSize > PREVIEW_NODE_LIMIT) throw tooMuch(PREVIEW_TOO_MANY_NODES);
      const contexts = await deps.tracking.sampleContexts(sampleSize);
      const evaluator = ruleSetEvaluator(rules);
      const matched = contexts.filter((ctx) => evaluator.evaluate(ctx)).length;
      const percentage = contexts.length === 0 ? 0 : Math.round((matched / contexts.length) * 10_000) / 100;
      return { estimated_percentage: percentage, sample_size: contexts.length, matched };
    },

    async addMembers(actor: AuditActor, id: string, ids: string[]) {
      const distinct = [...new Set(ids)];
      return db.transaction(async (tx) => {
        const row = await lockIdList(tx, id);
        const added = await store.insertMembers(tx, id, distinct);
        const memberCount = row.memberCount + added;
        // The row lock makes this count exact; throwing rolls the insert back, so nothing is added beyond the cap.
        if (memberCount > MAX_SEGMENT_MEMBERS) {
          throw new Unprocessable({ type: 'value_error', loc: ['body', 'add'], msg: TOO_MANY_MEMBERS });
        }
        const result = { added, already_members: distinct.length - added, member_count: memberCount };
        if (added > 0) {
          await store.updateSegment(tx, id, { memberCount, updatedAt: clock.now() });
          await audit.record(tx, actor, { action: 'segment_update', entityType: 'segment', entityId: id, details: { members: result } });
        }
        return result;
      });
    },

    async removeMembers(actor: AuditActor, id: string, ids: string[]) {
      const distinct = [...new Set(ids)];
      return db.transaction(async (tx) => {
        const row = await lockIdList(tx, id);
        const removed = await store.deleteMembers(tx, id, distinct);
        const result = { removed, not_members: distinct.length - removed, member_count: row.memberCount - removed };
        if (removed > 0) {
          await store.updateSegment(tx, id, { memberCount: result.member_count, updatedAt: clock.now() });
          await audit.record(tx, actor, { action: 'segment_update', entityType: 'segment', entityId: id, details: { members: result } });
        }
        return result;
      });
    },

    /**
     * For flag and experiment validation (spec, "Targeting rules"): the ids among these that name no segment, or an
     * inactive, archived or invalid one. Given a transaction, the usable segments stay share-locked until it ends, so
     * a concurrent archive cannot slip between this check and the write that references them.
     */
    async unusableSegmentIds(ids: string[], tx: Executor = db): Promise<string[]> {
      const rows = new Map((await store.findSegmentsForShare(tx, ids.filter((id) => UUID.test(id)))).map((r) => [r.id, r]));
      return ids.filter((id) => {
        const row = rows.get(id);
        return !row || row.status !== 'active' || !toDefinition(row).valid;
      });
    },

    /**
     * For flag and experiment validation (issue #27): whether `rules`, counting the regex conditions of the segments
     * they name each time they name one, reach more than MAX_REGEX_CONDITIONS. Read in `tx` after
     * unusableSegmentIds, so the segments counted are the share-locked ones.
     */
    async regexConditionsExceeded(rules: unknown, tx: Executor = db): Promise<boolean> {
      const ids = collectSegmentIds(rules).filter((id) => UUID.test(id));
      const rows = ids.length === 0 ? [] : await store.findSegments(tx, ids);
      return regexConditionsExceeded(rules, withoutMembers(new Map(rows.map((r) => [r.id, toDefinition(r)]))));
    },

    definitions,
    membershipEnv,

    /** For experiment targeting rules (tracking): the segments they name, id_list ones answering for this user. */
    async targetingEnv(segmentIds: string[], userId: string): Promise<EvaluationEnv> {
      if (segmentIds.length === 0) return {};
      const defs = new Map((await definitions(segmentIds)).map((d) => [d.id, d]));
      const idLists = [...defs.values()].filter((d) => d.kind === 'id_list').map((d) => d.id);
      return membershipEnv(defs, idLists, userId, withoutMembers(defs));
    },
  };
}

const NOBODY = (): boolean => false;

/** The definitions compiled once, every id_list segment holding nobody: the base `membershipEnv` adds members to. */
export function withoutMembers(definitions: ReadonlyMap<string, SegmentDefinition>): EvaluationEnv {
  const compiled = new Map([...definitions].map(([id, def]): [string, CompiledSegment] => [id, compileSegment(def, NOBODY)]));
  return { segments: (id) => compiled.get(id) };
}

/** Turns a definition into what the evaluator takes; id_list membership comes from a per-request lookup. */
export function compileSegment(def: SegmentDefinition, isMemberOf: (segmentId: string, userId: string) => boolean): CompiledSegment {
  if (def.kind === 'id_list') return { kind: 'id_list', has: (userId) => isMemberOf(def.id, userId) };
  return { kind: 'rules', rules: def.rules, valid: def.valid };
}
