import type { Db } from '../../db/client.js';
import type { WarehouseRunRow } from '../../db/schema/warehouse.js';
import type { Clock } from '../../platform/clock.js';
import * as store from './store.js';

/**
 * The durable run queue. Runs are rows in PostgreSQL; any API process drains them: a worker takes a free slot of
 * WAREHOUSE_MAX_CONCURRENT_RUNS and the oldest queued run in one transaction, both with FOR UPDATE SKIP LOCKED, so
 * concurrent workers never take the same run or more slots than exist. A running run holds a lease its worker
 * renews; a run whose lease ran out (its process died) is failed with `interrupted` by the reaper, and its slot freed.
 * Queued runs survive restarts and are picked up by the next worker that looks.
 */

const LEASE_MS = 120_000;
const HEARTBEAT_MS = 30_000;
export const INTERRUPTED = 'interrupted';

/** Per-process warehouse jobs (WAREHOUSE_MAX_CONCURRENT_JOBS), shared by runs, tests and validations. */
export interface JobGate {
  tryAcquire(): (() => void) | undefined;
  available(): number;
}

export function createJobGate(size: number): JobGate {
  let used = 0;
  return {
    tryAcquire() {
      if (used >= size) return undefined;
      used += 1;
      let released = false;
      return () => {
        if (!released) used -= 1;
        released = true;
      };
    },
    available: () => size - used,
  };
}

/** What executing a run produced; written in the same transaction that frees its slot. */
export type RunOutcome = Pick<store.RunInsert, 'status' | 'errorCode' | 'errorMessage' | 'results' | 'srm' | 'diagnostics' | 'preview' | 'sql'>;

export interface RunQueueDeps {
  db: Db;
  clock: Clock;
  gate: JobGate;
  maxConcurrentRuns: number;
  execute(run: WarehouseRunRow): Promise<RunOutcome>;
  onError(error: unknown): void;
}

export function createRunQueue(deps: RunQueueDeps) {
  const { db, clock, gate } = deps;
  /** Pumps looking for work and runs executing: drain waits until both are empty. */
  const active = new Set<Promise<void>>();
  let slotsReady: Promise<void> | undefined;
  let stopped = false;

  async function claim(): Promise<WarehouseRunRow | undefined> {
    await (slotsReady ??= store.ensureSlots(db, deps.maxConcurrentRuns));
    return db.transaction(async (tx) => {
      const slot = await store.lockFreeSlot(tx, deps.maxConcurrentRuns);
      if (slot === undefined) return undefined;
      const run = await store.lockNextQueued(tx);
      if (!run) return undefined;
      await store.takeSlot(tx, slot, run.id);
      const now = clock.now();
      return store.updateRun(tx, run.id, { status: 'running', startedAt: now, leaseExpiresAt: new Date(now.getTime() + LEASE_MS) });
    });
  }

  async function execute(run: WarehouseRunRow): Promise<void> {
    const heartbeat = setInterval(() => {
      void store.updateRun(db, run.id, { leaseExpiresAt: new Date(clock.now().getTime() + LEASE_MS) }).catch(deps.onError);
    }, HEARTBEAT_MS);
    heartbeat.unref();
    let outcome: RunOutcome;
    try {
      outcome = await deps.execute(run);
    } catch (error) {
      deps.onError(error);
      outcome = { status: 'failed', errorCode: 'internal_error', errorMessage: 'The run failed inside the platform', sql: [] };
    } finally {
      clearInterval(heartbeat);
    }
    await db.transaction(async (tx) => {
      await store.updateRun(tx, run.id, { ...outcome, finishedAt: clock.now(), leaseExpiresAt: null });
      await store.releaseSlot(tx, run.id);
    });
  }

  /** Starts runs while this process has a free job and the deployment a free slot. */
  function pump(): Promise<void> {
    const pumping: Promise<void> = claimAndStart().finally(() => active.delete(pumping));
    active.add(pumping);
    return pumping;
  }

  async function claimAndStart(): Promise<void> {
    while (!stopped) {
      const release = gate.tryAcquire();
      if (!release) return;
      let run: WarehouseRunRow | undefined;
      try {
        run = await claim();
      } catch (error) {
        release();
        deps.onError(error);
        return;
      }
      if (!run) {
        release();
        return;
      }
      const job: Promise<void> = execute(run)
        .catch(deps.onError)
        .finally(() => {
          release();
          active.delete(job);
          void pump();
        });
      active.add(job);
    }
  }

  return {
    /** Looks for work now (after an enqueue, or on the scheduler's tick); does not wait for it. */
    kick(): void {
      void pump();
    },
    /** Runs queued work to the end: tests await this instead of sleeping. */
    async drain(): Promise<void> {
      await pump();
      while (active.size > 0) {
        await Promise.all([...active]);
        if (active.size === 0) await pump();
      }
    },
    /** Fails runs whose worker is gone (expired lease) and frees their slots. */
    reap: (now: Date) => store.failExpiredRuns(db, now, INTERRUPTED, 'The server running this analysis stopped before it finished'),
    async stop(): Promise<void> {
      stopped = true;
      await Promise.all([...active]);
    },
  };
}

export type RunQueue = ReturnType<typeof createRunQueue>;
