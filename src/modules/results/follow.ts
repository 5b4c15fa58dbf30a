/**
 * Rollups that follow ingestion (docs/adr/0007-rollup-follows-commits.md): each commit of events or assignments
 * announced on the bus (DATA_COMMITTED) asks for a rollup of the experiments it names, so that a results read only
 * adds the few seconds since the watermark. Per experiment and process: one rollup at a time, started at once when
 * none ran for `intervalMs`, otherwise once that much time has passed since the last one started (commits that arrive
 * meanwhile ask for one more, not one each). Across processes the rollup's watermark locks keep each window added
 * once, and a rollup finding the watermarks already near the bound stops before reading anything. The results-rollup
 * job stays the backstop (a lost announcement, untagged flag events of experiments not heard of).
 */
import { performance } from 'node:perf_hooks';
import type { Bus } from '../../platform/bus.js';
import { DATA_COMMITTED, parseCommitNotice } from '../tracking/domain.js';
import { RESULTS_ROLLUP_REQUESTED } from './read.js';

export interface CommitFollowerDeps {
  bus: Bus;
  /** The least time between the starts of two rollups of one experiment in this process (ms). */
  intervalMs: number;
  /** Rolls up one experiment unless its watermarks are within `unlessWithinMs` of the bound; never throws. */
  refresh(id: string, unlessWithinMs: number): Promise<void>;
  /** Pacing time (ms): real time, not the data's clock (tests inject that one and may hold it still). */
  now?: () => number;
}

/** Entries kept for pacing beyond which idle ones are forgotten. */
const KEPT_IDLE = 10_000;

interface Pace {
  running?: Promise<void>;
  timer?: NodeJS.Timeout;
  /** A commit arrived while a rollup ran: one more after it. */
  again: boolean;
  lastStart: number;
}

export function createCommitFollower({ bus, intervalMs, refresh, now = () => performance.now() }: CommitFollowerDeps) {
  const paces = new Map<string, Pace>();
  let stopped = false;

  function start(id: string, pace: Pace): void {
    clearTimeout(pace.timer);
    pace.timer = undefined;
    if (pace.running) {
      pace.again = true;
      return;
    }
    pace.again = false;
    pace.lastStart = now();
    pace.running = refresh(id, intervalMs / 2).finally(() => {
      pace.running = undefined;
      if (pace.again) ask(id);
    });
  }

  function forgetIdle(): void {
    if (paces.size <= KEPT_IDLE) return;
    const before = now() - intervalMs;
    for (const [id, pace] of paces) if (!pace.running && !pace.timer && pace.lastStart < before) paces.delete(id);
  }

  function ask(id: string): void {
    if (stopped) return;
    let pace = paces.get(id);
    if (!pace) {
      forgetIdle();
      pace = { again: false, lastStart: -Infinity };
      paces.set(id, pace);
    }
    if (pace.running) {
      pace.again = true;
      return;
    }
    if (pace.timer) return;
    const wait = pace.lastStart + intervalMs - now();
    if (wait <= 0) return start(id, pace);
    const later = pace;
    pace.timer = setTimeout(() => start(id, later), wait);
    pace.timer.unref();
  }

  const unsubscribe = bus.subscribe(DATA_COMMITTED, (message) => {
    const notice = parseCommitNotice(message);
    if (!notice) return;
    // Untagged flag events count for every experiment: those heard of lately are asked for again.
    const ids = notice.all ? new Set([...notice.experiments, ...paces.keys()]) : notice.experiments;
    for (const id of ids) ask(id);
  });

  return {
    /**
     * Runs another rollup of the experiment (the results-rollup job's) in the same turn: after the one running, and
     * with none driven by commits starting meanwhile.
     */
    async exclusive<T>(id: string, run: () => Promise<T>): Promise<T> {
      let pace = paces.get(id);
      if (!pace) {
        pace = { again: false, lastStart: -Infinity };
        paces.set(id, pace);
      }
      while (pace.running) await pace.running;
      const held = pace;
      const result = run();
      held.lastStart = now();
      held.running = result.then(() => undefined, () => undefined).finally(() => {
        held.running = undefined;
        if (held.again) ask(id);
      });
      return result;
    },
    /** Runs the rollups waiting for their turn now and waits until none is running or waiting (tests, shutdown). */
    async drain(): Promise<void> {
      for (;;) {
        const busy = [...paces].filter(([, p]) => p.running || p.timer);
        if (busy.length === 0) return;
        for (const [id, pace] of busy) if (pace.timer && !pace.running) start(id, pace);
        await Promise.all(busy.map(([, p]) => p.running));
      }
    },
    /** Stops following: no rollup starts any more; waits for the running ones. */
    async stop(): Promise<void> {
      stopped = true;
      unsubscribe();
      for (const pace of paces.values()) clearTimeout(pace.timer);
      await Promise.all([...paces.values()].map((p) => p.running));
    },
  };
}

/**
 * The rollups a process runs besides the results-rollup job: the builds asked for by reads that ran out of time
 * (RESULTS_ROLLUP_REQUESTED, from any process; one at a time per experiment) and, when `commitRollupMs` is set, the
 * rollups following commits. `refresh` rolls up one experiment (with `unlessWithinMs`: a running one only).
 */
export function createBackgroundRollups({ bus, commitRollupMs, refresh }: {
  bus: Bus;
  commitRollupMs?: number;
  refresh(id: string, unlessWithinMs?: number): Promise<void>;
}) {
  const building = new Map<string, Promise<void>>();
  function buildInBackground(id: string): Promise<void> {
    const running = building.get(id);
    if (running) return running;
    const run = (async () => {
      try {
        await refresh(id);
      } catch {
        // Another read asks again; the results-rollup job retries running experiments every minute.
      } finally {
        building.delete(id);
      }
    })();
    building.set(id, run);
    return run;
  }
  bus.subscribe(RESULTS_ROLLUP_REQUESTED, (id) => void buildInBackground(id));

  const follower = commitRollupMs ? createCommitFollower({
    bus,
    intervalMs: commitRollupMs,
    refresh: (id, unlessWithinMs) => refresh(id, unlessWithinMs).catch(() => {
      // The experiment went, or the database failed: the next commit or the results-rollup job rolls it up.
    }),
  }) : undefined;

  return {
    /** Runs the results-rollup job's rollup of one experiment in turn with those driven by commits. */
    exclusive: <T>(id: string, run: () => Promise<T>): Promise<T> => (follower ? follower.exclusive(id, run) : run()),
    /** Waits for the builds and the rollups asked for by commits (those waiting for their turn start now). */
    async drain(): Promise<void> {
      await follower?.drain();
      await Promise.all([...building.values()]);
    },
    /** Shutdown: no more rollups driven by commits; waits for the running ones. */
    async stop(): Promise<void> {
      await follower?.stop();
      await Promise.all([...building.values()]);
    },
  };
}
