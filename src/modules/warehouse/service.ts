/**
 * The warehouse service: connections (connections.ts), sources (sources.ts), previews and analyses (analysis-requests.ts) and
 * their execution (execute.ts), over one context and its shared helpers (access.ts).
 */
import type { WarehouseConfig } from '../../config.js';
import type { Db } from '../../db/client.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Clock } from '../../platform/clock.js';
import type { Experiment } from '../experiments/read-model.js';
import { createWarehouseAccess, type WarehouseContext } from './access.js';
import { createAnalyses, type AnalysesDeps } from './analysis-requests.js';
import type { ExperimentFacts } from './statistics.js';

export type { ExperimentFacts };
import { createConnections } from './connections.js';
import { DRIVERS } from './connectors/index.js';
import type { Driver } from './connectors/types.js';
import { createKeyring } from './credentials.js';
import { createRunExecutor } from './execute.js';
import { createOutboundGuard, type Resolver } from './outbound.js';
import { createJobGate, createRunQueue } from './runs.js';
import { createSources } from './sources.js';
import type { WarehouseType } from './types.js';

export interface WarehouseDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  config: WarehouseConfig;
  /** undefined when the experiment does not exist. */
  experiment(id: string): Promise<ExperimentFacts | undefined>;
  /** The metric-definitions module's service (definition-backed metrics); without it every definition is unknown. */
  definitions?: AnalysesDeps['definitions'];
  drivers?: Record<WarehouseType, Driver>;
  /** DNS for the outbound guard (default: the system's, as sockets resolve). */
  resolve?: Resolver;
  onError(error: unknown): void;
}

export function createWarehouseService(deps: WarehouseDeps) {
  const { db, audit, clock, config } = deps;
  const ctx: WarehouseContext = {
    db,
    audit,
    clock,
    config,
    drivers: deps.drivers ?? DRIVERS,
    outbound: createOutboundGuard(config, deps.resolve),
    keyring: config.credentialsKeys ? createKeyring(config.credentialsKeys) : undefined,
    gate: createJobGate(config.maxConcurrentJobs),
    running: new Set(),
    stopping: false,
  };
  const access = createWarehouseAccess(ctx);
  const queue = createRunQueue({
    db,
    clock,
    gate: ctx.gate,
    maxConcurrentRuns: config.maxConcurrentRuns,
    execute: createRunExecutor(ctx, access),
    onError: deps.onError,
  });
  const { sourceOr404, requireSourceRole, ...sources } = createSources(ctx, access);

  return {
    queue,
    ...createConnections(ctx, access),
    ...sources,
    ...createAnalyses(ctx, access, { queue, sources: { sourceOr404, requireSourceRole }, experiment: deps.experiment, definitions: deps.definitions }),

    /** Scheduler tick: fail runs whose worker is gone, then look for queued work. */
    async tick(now: Date): Promise<void> {
      await queue.reap(now);
      queue.kick();
    },

    drain: () => queue.drain(),
    /** Shutdown: no new runs start, statements in flight are cancelled and their runs fail as interrupted. */
    async stop(): Promise<void> {
      ctx.stopping = true;
      const stopped = queue.stop();
      await Promise.all([...ctx.running].map((session) => session.cancel().catch(() => undefined)));
      await stopped;
    },
  };
}

export type WarehouseService = ReturnType<typeof createWarehouseService>;

/** Adapts the experiments read model's lookup to the facts an analysis reads. */
export function experimentFacts(read: (id: string) => Promise<Experiment | undefined>): WarehouseDeps['experiment'] {
  return async (id) => {
    const e = await read(id);
    if (!e) return undefined;
    return {
      type: e.experimentType,
      confidenceLevel: e.confidenceLevel,
      correctionMethod: e.correctionMethod,
      startDate: e.startDate,
      endDate: e.endDate,
      variants: e.variants.map((v) => ({ id: v.id, name: v.name, isControl: v.isControl, trafficAllocation: v.trafficAllocation })),
    };
  };
}
