import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/client.js';
import type { ExperimentStatus } from '../experiments/domain.js';
import type { MutexGroupRow } from '../../db/schema/mutual-exclusion.js';
import type { AuditLog } from '../../platform/audit.js';
import { hasRole, type Actor } from '../../platform/auth.js';
import type { Bus } from '../../platform/bus.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict, Forbidden, NOT_ENOUGH_PERMISSIONS, NotFound, Unprocessable } from '../../platform/errors.js';
import type { GroupCreate, GroupUpdate, GroupView } from './schemas.js';
import * as store from './store.js';
import { EXPERIMENT_NOT_FOUND } from '../experiments/domain.js';

export const GROUP_NOT_FOUND = 'Mutual exclusion group not found';
export const NOT_A_MEMBER = 'This experiment is not in the group';
export const GROUP_ARCHIVED = 'This group is archived; its experiments cannot change';
export const IN_ANOTHER_GROUP = 'An experiment can belong to only one active mutual exclusion group';
export const ALLOCATION_TOO_LARGE = 'Value error, Traffic allocations must add up to at most 100';
export const ALLOCATION_NOT_MEMBER = 'Value error, Traffic allocation may name only experiments in the group';
export const experimentNotJoinable = (status: ExperimentStatus) =>
  `An experiment in ${status} status cannot join a mutual exclusion group`;

/** Experiments that can still take users; finished ones have no place in a group. */
const JOINABLE: ExperimentStatus[] = ['draft', 'active', 'paused'];
const ALLOCATION_TOLERANCE = 1e-9;
/** Announced (with the group id) after every change, so assignment caches in every process drop their copies. */
import { MUTUAL_EXCLUSION_CHANGED } from './domain.js';
export { MUTUAL_EXCLUSION_CHANGED };

type ExperimentSummary = { id: string; key: string; name: string; status: ExperimentStatus };

export interface MutualExclusionDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  bus: Bus;
  experiments: { summaries(ids: string[]): Promise<ExperimentSummary[]> };
}

export type MutualExclusionService = ReturnType<typeof createMutualExclusionService>;

export function createMutualExclusionService(deps: MutualExclusionDeps) {
  const { db, audit, clock } = deps;
  const announce = (groupId: string) => deps.bus.publish(MUTUAL_EXCLUSION_CHANGED, groupId).catch(() => undefined);

  /** Read after the change commits: experiment summaries come through the experiments service, on its own connection. */
  async function views(rows: MutexGroupRow[]): Promise<GroupView[]> {
    const memberRows = await store.listMembers(db, rows.map((r) => r.id));
    const summaries = new Map((await deps.experiments.summaries([...new Set(memberRows.map((m) => m.experimentId))])).map((e) => [e.id, e]));
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      description: row.description,
      status: row.status,
      traffic_allocation: row.trafficAllocation,
      experiments: memberRows
        .filter((m) => m.groupId === row.id)
        .flatMap((m) => summaries.get(m.experimentId) ?? []),
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    }));
  }
  const view = async (row: MutexGroupRow) => (await views([row]))[0];

  async function mustFind(tx: Executor, id: string): Promise<MutexGroupRow> {
    const row = await store.findGroup(tx, id);
    if (!row) throw new NotFound(GROUP_NOT_FOUND);
    return row;
  }

  /** Experiments that may join: they exist (404) and are not finished (409). */
  async function joinable(ids: string[]): Promise<void> {
    const found = new Map((await deps.experiments.summaries(ids)).map((e) => [e.id, e]));
    for (const id of ids) {
      const experiment = found.get(id);
      if (!experiment) throw new NotFound(EXPERIMENT_NOT_FOUND);
      if (!JOINABLE.includes(experiment.status)) throw new Conflict(experimentNotJoinable(experiment.status));
    }
  }

  /** An active group's members may not be in another active group (spec: at most one active group). */
  async function assertExclusive(tx: Executor, groupId: string | null, experimentIds: string[]): Promise<void> {
    if ((await store.inOtherActiveGroup(tx, experimentIds, groupId)).length) throw new Conflict(IN_ANOTHER_GROUP);
  }

  function checkAllocation(allocation: Record<string, number> | null | undefined, memberIds: string[]): void {
    if (!allocation) return;
    const loc = ['body', 'traffic_allocation'];
    const ids = new Set(memberIds.map((id) => id.toLowerCase()));
    if (Object.keys(allocation).some((id) => !ids.has(id.toLowerCase()))) {
      throw new Unprocessable({ type: 'value_error', loc, msg: ALLOCATION_NOT_MEMBER });
    }
    if (Object.values(allocation).reduce((a, b) => a + b, 0) > 100 + ALLOCATION_TOLERANCE) {
      throw new Unprocessable({ type: 'value_error', loc, msg: ALLOCATION_TOO_LARGE });
    }
  }

  /** Keys in the case the members are stored in, so assignment finds each member's share. */
  const normaliseAllocation = (allocation: Record<string, number> | null | undefined) =>
    allocation && Object.fromEntries(Object.entries(allocation).map(([id, pct]) => [id.toLowerCase(), pct]));

  const memberIds = async (tx: Executor, groupId: string) => (await store.listMembers(tx, [groupId])).map((m) => m.experimentId);

  return {
    async list(status?: GroupView['status']): Promise<GroupView[]> {
      return views(await store.listGroups(db, status));
    },

    async get(id: string): Promise<GroupView> {
      return view(await mustFind(db, id));
    },

    async create(actor: Actor, body: GroupCreate): Promise<GroupView> {
      const experimentIds = (body.experiment_ids ?? []).map((id) => id.toLowerCase());
      checkAllocation(body.traffic_allocation, experimentIds);
      await joinable(experimentIds);
      const created = await db.transaction(async (tx) => {
        await store.lockMemberships(tx);
        await assertExclusive(tx, null, experimentIds);
        const now = clock.now();
        const row = await store.insertGroup(tx, {
          id: randomUUID(),
          name: body.name,
          description: body.description ?? null,
          status: 'active',
          trafficAllocation: normaliseAllocation(body.traffic_allocation) ?? null,
          createdById: actor.id,
          createdAt: now,
          updatedAt: now,
        });
        await store.addMembers(tx, row.id, experimentIds, now);
        await audit.record(tx, actor, {
          action: 'mutual_exclusion_group_create',
          entityType: 'mutual_exclusion_group',
          entityId: row.id,
          after: { name: row.name, status: row.status, experiment_ids: experimentIds, traffic_allocation: row.trafficAllocation },
        });
        return row;
      });
      await announce(created.id);
      return view(created);
    },

    /** DEVELOPER edits name, description and allocation; a status change needs ADMIN (spec). */
    async update(actor: Actor, id: string, body: GroupUpdate): Promise<GroupView> {
      const updated = await db.transaction(async (tx) => {
        await store.lockMemberships(tx);
        const row = await mustFind(tx, id);
        const statusChanges = body.status !== undefined && body.status !== row.status;
        if (statusChanges && !hasRole(actor, 'ADMIN')) throw new Forbidden(NOT_ENOUGH_PERMISSIONS);
        const members = await memberIds(tx, id);
        checkAllocation(body.traffic_allocation, members);
        if (statusChanges && body.status === 'active') await assertExclusive(tx, id, members);
        const next = await store.updateGroup(tx, id, {
          name: body.name,
          description: body.description,
          trafficAllocation: body.traffic_allocation === undefined ? undefined : normaliseAllocation(body.traffic_allocation),
          status: body.status,
          updatedAt: clock.now(),
        });
        await audit.record(tx, actor, {
          action: 'mutual_exclusion_group_update',
          entityType: 'mutual_exclusion_group',
          entityId: id,
          before: { name: row.name, status: row.status, traffic_allocation: row.trafficAllocation },
          after: { name: next.name, status: next.status, traffic_allocation: next.trafficAllocation },
        });
        return next;
      });
      await announce(id);
      return view(updated);
    },

    /** DELETE archives: the group stops excluding anyone; its history stays. */
    async archive(actor: Actor, id: string): Promise<void> {
      await db.transaction(async (tx) => {
        await store.lockMemberships(tx);
        const row = await mustFind(tx, id);
        if (row.status === 'archived') return;
        await store.updateGroup(tx, id, { status: 'archived', updatedAt: clock.now() });
        await audit.record(tx, actor, {
          action: 'mutual_exclusion_group_archive',
          entityType: 'mutual_exclusion_group',
          entityId: id,
          before: { status: row.status },
          after: { status: 'archived' },
        });
      });
      await announce(id);
    },

    async addExperiment(actor: Actor, id: string, experimentIdSent: string): Promise<GroupView> {
      const experimentId = experimentIdSent.toLowerCase();
      await mustFind(db, id);
      await joinable([experimentId]);
      const group = await db.transaction(async (tx) => {
        await store.lockMemberships(tx);
        const row = await mustFind(tx, id);
        if (row.status === 'archived') throw new Conflict(GROUP_ARCHIVED);
        if (row.status === 'active') await assertExclusive(tx, id, [experimentId]);
        if (!(await memberIds(tx, id)).includes(experimentId)) {
          await store.addMembers(tx, id, [experimentId], clock.now());
          await store.updateGroup(tx, id, { updatedAt: clock.now() });
          await audit.record(tx, actor, {
            action: 'mutual_exclusion_group_add_experiment',
            entityType: 'mutual_exclusion_group',
            entityId: id,
            details: { experiment_id: experimentId },
          });
        }
        return mustFind(tx, id);
      });
      await announce(id);
      return view(group);
    },

    /** Removing a member also drops its share from the allocation, which may only name members. */
    async removeExperiment(actor: Actor, id: string, experimentIdSent: string): Promise<GroupView> {
      const experimentId = experimentIdSent.toLowerCase();
      const updated = await db.transaction(async (tx) => {
        await store.lockMemberships(tx);
        const row = await mustFind(tx, id);
        if (row.status === 'archived') throw new Conflict(GROUP_ARCHIVED);
        if (!(await store.removeMember(tx, id, experimentId))) throw new NotFound(NOT_A_MEMBER);
        const allocation = row.trafficAllocation && { ...row.trafficAllocation };
        if (allocation) delete allocation[experimentId];
        const next = await store.updateGroup(tx, id, { trafficAllocation: allocation, updatedAt: clock.now() });
        await audit.record(tx, actor, {
          action: 'mutual_exclusion_group_remove_experiment',
          entityType: 'mutual_exclusion_group',
          entityId: id,
          details: { experiment_id: experimentId },
        });
        return next;
      });
      await announce(id);
      return view(updated);
    },
  };
}
