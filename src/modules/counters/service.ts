import type { AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import type { Db } from '../../db/client.js';
import type { Redis } from '../../platform/redis.js';
import { BadRequest, NotFound } from '../../platform/errors.js';
import type { BulkBody, IncrementBody } from './schemas.js';
import { postgresCounterStore, redisCounterStore } from './store.js';
import { EXPERIMENT_NOT_FOUND } from '../experiments/domain.js';

export const EXPERIMENT_ID_MISMATCH = 'experiment_id in the body does not match the experiment_id in the path';
const DEFAULT_COUNTER = 'events';

export type CountersService = ReturnType<typeof createCountersService>;

/**
 * Real-time counters per experiment. Only existing experiments have counters; a reset is audited. The values live in
 * Redis when the deployment has one (shared by every process), else in PostgreSQL.
 */
export function createCountersService(deps: {
  db: Db;
  redis: Redis | undefined;
  audit: AuditLog;
  /** Whether an experiment has this id (the experiments module's read model). */
  experiments: { exists(id: string): Promise<boolean> };
}) {
  const store = deps.redis ? redisCounterStore(deps.redis) : postgresCounterStore(deps.db);

  async function assertExperiments(ids: string[]): Promise<void> {
    for (const id of new Set(ids)) {
      if (!(await deps.experiments.exists(id))) throw new NotFound(EXPERIMENT_NOT_FOUND);
    }
  }

  async function view(experimentId: string) {
    const counters = await store.read(experimentId);
    const total = Object.values(counters).reduce((a, b) => a + b, 0);
    return { experiment_id: experimentId, counters, total };
  }

  return {
    async get(experimentId: string) {
      await assertExperiments([experimentId]);
      return view(experimentId);
    },

    async increment(experimentId: string, body: IncrementBody) {
      if (body.experiment_id !== undefined && body.experiment_id.toLowerCase() !== experimentId.toLowerCase()) {
        throw new BadRequest(EXPERIMENT_ID_MISMATCH);
      }
      await assertExperiments([experimentId]);
      await store.increment([{ experimentId, name: body.counter ?? DEFAULT_COUNTER, amount: body.amount ?? 1 }]);
      return view(experimentId);
    },

    /** All experiments are checked before anything is counted: an unknown one refuses the whole request. */
    async bulk(body: BulkBody) {
      await assertExperiments(body.increments.map((i) => i.experiment_id));
      const increments = body.increments.map((i) => ({ experimentId: i.experiment_id, name: i.counter ?? DEFAULT_COUNTER, amount: i.amount ?? 1 }));
      const values = await store.increment(increments);
      return { results: increments.map((inc, i) => ({ experiment_id: inc.experimentId, counter: inc.name, value: values[i] })) };
    },

    async reset(actor: Actor, experimentId: string) {
      await assertExperiments([experimentId]);
      const before = await store.read(experimentId);
      await store.reset(experimentId);
      await deps.audit.record(deps.db, actor, {
        action: 'counters_reset',
        entityType: 'experiment',
        entityId: experimentId,
        before: { counters: before },
        after: { counters: {} },
      });
      return view(experimentId);
    },
  };
}
