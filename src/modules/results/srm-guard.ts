/**
 * What the results-rollup job does about a sequential SRM (docs/api-notes.md, "Results"): alert once per experiment
 * and, for an experiment that opted in, pause it once; and the opt-in itself (srm-settings routes).
 */
import type { Db } from '../../db/client.js';
import { SYSTEM_ACTOR, type AuditActor, type AuditLog } from '../../platform/audit.js';
import type { Clock } from '../../platform/clock.js';
import type { AnalysedExperiment } from './experiment.js';
import type { SrmBlock, SrmSettings, SrmSettingsBody } from './schemas.js';
import * as srmState from './srm-state.js';

export interface SrmGuardDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  /** Pauses a running experiment as the system; false when it was no longer active. */
  pauseAutomatically(id: string): Promise<boolean>;
  announce?: (payload: { experiment_id: string; experiment_name: string; p_value: number; auto_paused?: boolean }) => void;
}

const settingsView = (id: string, s: srmState.SrmState): SrmSettings => ({
  experiment_id: id,
  auto_pause: s.autoPause,
  updated_at: s.updatedAt?.toISOString() ?? null,
  alerted_at: s.alertedAt?.toISOString() ?? null,
  auto_paused_at: s.autoPausedAt?.toISOString() ?? null,
});

export function createSrmGuard(deps: SrmGuardDeps) {
  const { db, clock } = deps;
  return {
    autoPause: async (id: string) => (await srmState.readSrmState(db, id)).autoPause,

    /** After a rollup of a running experiment: a sequential SRM is alerted once and pauses an opted-in experiment once. */
    async onRollup(e: AnalysedExperiment, srm: SrmBlock | null): Promise<void> {
      const sequential = srm?.sequential;
      if (!sequential?.warning || e.status !== 'active') return;
      const now = clock.now();
      const state = await srmState.readSrmState(db, e.id);
      const alert = await srmState.claimAlert(db, e.id, sequential.p_value, now);
      let paused = false;
      if (state.autoPause && state.autoPausedAt === null && (await deps.pauseAutomatically(e.id))) {
        paused = true;
        await db.transaction(async (tx) => {
          await srmState.markAutoPaused(tx, e.id, now);
          await deps.audit.record(tx, SYSTEM_ACTOR, {
            action: 'experiment_srm_auto_pause', entityType: 'experiment', entityId: e.id,
            details: { reason: 'sample_ratio_mismatch', test: sequential.method, p_value: sequential.p_value, threshold: sequential.threshold },
          });
        });
      }
      if (alert || paused) deps.announce?.({ experiment_id: e.id, experiment_name: e.name, p_value: sequential.p_value, auto_paused: paused });
    },

    settings: async (id: string): Promise<SrmSettings> => settingsView(id, await srmState.readSrmState(db, id)),

    /** The auto-pause opt-in, audited. */
    async update(actor: AuditActor, id: string, body: SrmSettingsBody): Promise<SrmSettings> {
      const state = await db.transaction(async (tx) => {
        const before = await srmState.readSrmState(tx, id);
        const after = await srmState.setAutoPause(tx, id, body.auto_pause, clock.now());
        await deps.audit.record(tx, actor, {
          action: 'experiment_srm_settings_update', entityType: 'experiment', entityId: id,
          before: { auto_pause: before.autoPause }, after: { auto_pause: after.autoPause },
        });
        return after;
      });
      return settingsView(id, state);
    },
  };
}
