/** result_srm_state: the SRM auto-pause opt-in of an experiment and what the results-rollup job did about a mismatch. */
import { sql } from 'drizzle-orm';
import { queryRows, type Executor } from '../../db/client.js';
import { resultSrmState } from '../../db/schema/results.js';

export interface SrmState {
  autoPause: boolean;
  updatedAt: Date | null;
  alertedAt: Date | null;
  autoPausedAt: Date | null;
}

type Row = { auto_pause: boolean; updated_at: string | Date | null; alerted_at: string | Date | null; auto_paused_at: string | Date | null };
const date = (v: string | Date | null) => (v === null ? null : new Date(v));
const toState = (r: Row | undefined): SrmState =>
  r ? { autoPause: r.auto_pause, updatedAt: date(r.updated_at), alertedAt: date(r.alerted_at), autoPausedAt: date(r.auto_paused_at) }
    : { autoPause: false, updatedAt: null, alertedAt: null, autoPausedAt: null };

export async function readSrmState(db: Executor, experimentId: string): Promise<SrmState> {
  const [row] = await queryRows<Row>(db, sql`
    SELECT auto_pause, updated_at, alerted_at, auto_paused_at FROM ${resultSrmState} WHERE experiment_id = ${experimentId}`);
  return toState(row);
}

export async function setAutoPause(db: Executor, experimentId: string, autoPause: boolean, now: Date): Promise<SrmState> {
  const [row] = await queryRows<Row>(db, sql`
    INSERT INTO ${resultSrmState} (experiment_id, auto_pause, updated_at) VALUES (${experimentId}, ${autoPause}, ${now.toISOString()}::timestamptz)
    ON CONFLICT (experiment_id) DO UPDATE SET auto_pause = excluded.auto_pause, updated_at = excluded.updated_at
    RETURNING auto_pause, updated_at, alerted_at, auto_paused_at`);
  return toState(row);
}

/** Records the first alert of a mismatch; false when one was already recorded (by this or another process). */
export async function claimAlert(db: Executor, experimentId: string, pValue: number, now: Date): Promise<boolean> {
  const rows = await queryRows<{ experiment_id: string }>(db, sql`
    INSERT INTO ${resultSrmState} (experiment_id, alerted_at, alert_p_value) VALUES (${experimentId}, ${now.toISOString()}::timestamptz, ${pValue})
    ON CONFLICT (experiment_id) DO UPDATE SET alerted_at = excluded.alerted_at, alert_p_value = excluded.alert_p_value
      WHERE ${resultSrmState}.alerted_at IS NULL
    RETURNING experiment_id`);
  return rows.length > 0;
}

export async function markAutoPaused(db: Executor, experimentId: string, now: Date): Promise<void> {
  await db.execute(sql`UPDATE ${resultSrmState} SET auto_paused_at = ${now.toISOString()}::timestamptz WHERE experiment_id = ${experimentId}`);
}
