import type { Db, Executor } from '../../db/client.js';
import type { SegmentUser } from '../segments/schemas.js';
import * as store from './store.js';

/**
 * What other modules read of flags without the flags service: it needs only the database, so the segments module
 * (which the flags service needs for rule validation) can be given it at construction instead of a late-bound loop.
 */
export type FlagsReadModel = ReturnType<typeof createFlagsReadModel>;

export function createFlagsReadModel(db: Db) {
  return {
    /** For segments: every flag whose rules name the segment, status as on the wire (read in the caller's transaction). */
    async flagsUsingSegment(segmentId: string, tx: Executor = db): Promise<SegmentUser[]> {
      return (await store.flagsNamingSegment(tx, segmentId)).map((f) => ({ ...f, status: f.status.toLowerCase() }));
    },

    /**
     * For environments: a new environment's state of every flag, in the creating transaction: copied from `copyFrom`,
     * or off. Returns how many flags it holds.
     */
    seedEnvironment: (tx: Executor, environment: string, copyFrom: string | undefined): Promise<number> =>
      store.seedEnvironment(tx, environment, copyFrom),
  };
}
