import type { Db } from '../../db/client.js';
import type { SafetyFlagConfigRow, SafetyMetrics, SafetySettingsRow } from '../../db/schema/safety.js';
import { SYSTEM_ACTOR, type AuditActor, type AuditLog } from '../../platform/audit.js';
import type { Clock } from '../../platform/clock.js';
import { DomainError, NotFound, type Loc } from '../../platform/errors.js';
import type { ErrorReportsService } from '../error-reports/service.js';
import { FLAG_NOT_FOUND, type FlagsService } from '../feature-flags/service.js';
import type { RolloutSchedulesService } from '../rollout-schedules/service.js';
import type { CheckView, ConfigUpdate, ConfigView, RollbackView, SettingsUpdate, SettingsView } from './schemas.js';
import * as store from './store.js';
import { FOREIGN_KEY_VIOLATION, sqlState } from '../../db/errors.js';

/** Until a superuser changes them: roll back at more than 10 counted errors per minute over 5 minutes. */
export const DEFAULT_SETTINGS: Omit<SafetySettingsRow, 'id' | 'updatedAt'> = {
  autoRollbackEnabled: true,
  errorRateThreshold: 10,
  windowMinutes: 5,
};
/** Spec, "Other resources": the values a new config takes for omitted fields; a flag without config behaves so. */
export const DEFAULT_CONFIG = { enabled: false, metrics: {} as SafetyMetrics, rollbackPercentage: 0 };

const MINUTE_MS = 60_000;

export interface Assessment {
  flagId: string;
  flagKey: string;
  config: Pick<SafetyFlagConfigRow, 'enabled' | 'metrics' | 'rollbackPercentage' | 'lastRollbackAt'>;
  settings: typeof DEFAULT_SETTINGS;
  windowMinutes: number;
  windowStart: Date;
  errorCount: number;
  uncountedErrorCount: number;
  errorRate: number;
  threshold: number;
  thresholdExceeded: boolean;
  wouldRollBack: boolean;
  now: Date;
}

function settingsView(row: SafetySettingsRow | undefined): SettingsView {
  const s = row ?? DEFAULT_SETTINGS;
  return {
    auto_rollback_enabled: s.autoRollbackEnabled,
    error_rate_threshold: s.errorRateThreshold,
    window_minutes: s.windowMinutes,
    updated_at: row?.updatedAt.toISOString() ?? null,
  };
}

function configView(flagId: string, row: SafetyFlagConfigRow | undefined): ConfigView {
  return {
    flag_id: flagId,
    enabled: row?.enabled ?? DEFAULT_CONFIG.enabled,
    metrics: row?.metrics ?? DEFAULT_CONFIG.metrics,
    rollback_percentage: row?.rollbackPercentage ?? DEFAULT_CONFIG.rollbackPercentage,
    last_rollback_at: row?.lastRollbackAt?.toISOString() ?? null,
    created_at: row?.createdAt.toISOString() ?? null,
    updated_at: row?.updatedAt.toISOString() ?? null,
    ...(row?.environment ? { environment: row.environment } : {}),
  };
}

/** The wire fields of a config or settings change whose value really changes, before and after. */
function diff<T extends Record<string, unknown>>(current: T, next: Partial<T>): { before: Partial<T>; after: Partial<T> } {
  const before: Partial<T> = {};
  const after: Partial<T> = {};
  for (const key of Object.keys(next) as Array<keyof T>) {
    if (next[key] === undefined || JSON.stringify(next[key]) === JSON.stringify(current[key])) continue;
    before[key] = current[key];
    after[key] = next[key];
  }
  return { before, after };
}

export interface SafetyDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  flags: Pick<FlagsService, 'getFlag' | 'changeRollout'>;
  schedules: Pick<RolloutSchedulesService, 'pauseActiveOfFlag'>;
  errorReports: Pick<ErrorReportsService, 'countsForFlag'>;
  /** Alerts subscribers (notification preferences) after a rollback; never throws. */
  notifications?: { notify(kind: 'flag_rolled_back', payload: { flag_id: string; flag_key: string; percentage: number; reason: string | null; environment?: string | null }): Promise<unknown> };
  /** The environment a config names (unknown: 422). */
  environments: { resolve(key: string | undefined, loc: Loc, unprocessable?: boolean): Promise<string> };
}

export type SafetyService = ReturnType<typeof createSafetyService>;

export function createSafetyService(deps: SafetyDeps) {
  const { db, audit, clock, flags } = deps;

  const currentSettings = async () => (await store.findSettings(db)) ?? DEFAULT_SETTINGS;

  /**
   * The flag's error rate (docs/api-notes.md, "Safety"): counted error reports in the window divided by its length
   * in minutes. The window starts window_minutes before `now`, or at the last rollback if that is later, so the
   * errors that caused a rollback never cause another. A rollback is due when the rate is above the threshold, the
   * flag is monitored, automatic rollback is on, and the flag still exposes users beyond the rollback percentage.
   */
  async function assess(flagId: string, now: Date): Promise<Assessment> {
    const [row, settings] = await Promise.all([store.findConfig(db, flagId), currentSettings()]);
    const flag = await flags.getFlag(flagId, row?.environment ?? undefined);
    const config = row ?? { ...DEFAULT_CONFIG, lastRollbackAt: null };
    const windowMinutes = config.metrics.window_minutes ?? settings.windowMinutes;
    const threshold = config.metrics.error_rate_threshold ?? settings.errorRateThreshold;
    const windowFrom = now.getTime() - windowMinutes * MINUTE_MS;
    const windowStart = new Date(Math.max(windowFrom, config.lastRollbackAt?.getTime() ?? windowFrom));
    const counts = await deps.errorReports.countsForFlag(flagId, windowStart, now);
    const errorRate = counts.counted / windowMinutes;
    const thresholdExceeded = errorRate > threshold;
    const exposed = flag.is_active && (config.rollbackPercentage === 0 || flag.rollout_percentage > config.rollbackPercentage);
    return {
      flagId, flagKey: flag.key, config, settings, windowMinutes, windowStart,
      errorCount: counts.counted, uncountedErrorCount: counts.uncounted, errorRate, threshold, thresholdExceeded,
      wouldRollBack: thresholdExceeded && config.enabled && settings.autoRollbackEnabled && exposed,
      now,
    };
  }

  /**
   * One transaction under the flag's row lock (flags.changeRollout): pauses the flag's active schedule (so no stage
   * raises the rollout again), sets the rollout (0 also turns the flag off), stamps the config and records the
   * rollback. A stage in flight takes the same lock and checks its schedule under it, so it cannot land afterwards.
   */
  async function rollback(
    actor: AuditActor,
    flagId: string,
    request: { percentage?: number; reason?: string },
    cause: { automatic: boolean; now: Date; errorRate?: number },
  ): Promise<RollbackView> {
    const reason = request.reason ?? null;
    const details = { cause: 'safety_rollback', reason, automatic: cause.automatic };
    let percentage = 0;
    let pausedScheduleIds: string[] = [];
    const environment = (await store.findConfig(db, flagId))?.environment ?? null;
    const after = await flags.changeRollout(flagId, actor, details, async (flag, tx) => {
      const config = await store.findConfig(tx, flagId);
      percentage = request.percentage ?? config?.rollbackPercentage ?? DEFAULT_CONFIG.rollbackPercentage;
      pausedScheduleIds = await deps.schedules.pauseActiveOfFlag(tx, flagId, actor, details);
      if (config) await store.updateConfig(tx, flagId, { lastRollbackAt: cause.now });
      await audit.record(tx, actor, {
        action: 'safety_rollback', entityType: 'feature_flag', entityId: flagId,
        before: { is_active: flag.is_active, rollout_percentage: flag.rollout_percentage },
        after: { is_active: percentage === 0 ? false : flag.is_active, rollout_percentage: percentage },
        details: {
          percentage, reason, automatic: cause.automatic, paused_schedule_ids: pausedScheduleIds,
          ...(cause.errorRate === undefined ? {} : { error_rate: cause.errorRate }),
        },
      });
      // Spec: 0 turns the flag off for all users; the rollout goes to 0 too, so turning it on again starts from none.
      return { percentage, turnOff: percentage === 0 };
    }, environment);
    void deps.notifications?.notify('flag_rolled_back', { flag_id: flagId, flag_key: after.key, percentage, reason, ...(environment ? { environment } : {}) });
    return {
      flag_id: flagId, flag_key: after.key, percentage, reason, automatic: cause.automatic,
      is_active: after.is_active, rollout_percentage: after.rollout_percentage,
      paused_schedule_ids: pausedScheduleIds, rolled_back_at: cause.now.toISOString(),
    };
  }

  return {
    settings: async (): Promise<SettingsView> => settingsView(await store.findSettings(db)),

    /** Global settings: the current window and threshold for other modules (metrics summary). */
    currentSettings,

    async updateSettings(actor: AuditActor, body: SettingsUpdate): Promise<SettingsView> {
      return db.transaction(async (tx) => {
        const now = clock.now();
        const row = await store.lockSettings(tx, { ...DEFAULT_SETTINGS, updatedAt: now });
        const current = settingsView(row);
        const { before, after } = diff(current, body);
        if (Object.keys(after).length === 0) return current;
        const updated = await store.updateSettings(tx, {
          autoRollbackEnabled: body.auto_rollback_enabled,
          errorRateThreshold: body.error_rate_threshold,
          windowMinutes: body.window_minutes,
          updatedAt: now,
        });
        await audit.record(tx, actor, { action: 'safety_settings_update', entityType: 'safety_settings', entityId: null, before, after });
        return settingsView(updated);
      });
    },

    async config(flagId: string): Promise<ConfigView> {
      await flags.getFlag(flagId);
      return configView(flagId, await store.findConfig(db, flagId));
    },

    /** Creates or updates: an omitted field keeps its stored value, or takes its default when the config is new. */
    async updateConfig(actor: AuditActor, flagId: string, body: ConfigUpdate): Promise<ConfigView> {
      await flags.getFlag(flagId);
      if (body.environment !== undefined) await deps.environments.resolve(body.environment, ['body', 'environment'], true);
      try {
        return await db.transaction(async (tx) => {
          const now = clock.now();
          const created = await store.insertConfigIfAbsent(tx, { flagId, ...DEFAULT_CONFIG, createdAt: now, updatedAt: now });
          const row = (await store.lockConfig(tx, flagId))!;
          const current = configView(flagId, row);
          const { before, after } = diff(current, body);
          if (!created && Object.keys(after).length === 0) return current;
          const updated = await store.updateConfig(tx, flagId, {
            enabled: body.enabled, metrics: body.metrics, rollbackPercentage: body.rollback_percentage, environment: body.environment, updatedAt: now,
          });
          const view = configView(flagId, updated);
          await audit.record(tx, actor, {
            action: 'safety_config_update', entityType: 'feature_flag', entityId: flagId,
            before: created ? null : before,
            after: created ? { enabled: view.enabled, metrics: view.metrics, rollback_percentage: view.rollback_percentage } : after,
          });
          return view;
        });
      } catch (error) {
        // The flag was deleted between the check and the insert.
        if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw new NotFound(FLAG_NOT_FOUND);
        throw error;
      }
    },

    async check(flagId: string): Promise<CheckView> {
      const a = await assess(flagId, clock.now());
      return {
        flag_id: a.flagId, flag_key: a.flagKey, enabled: a.config.enabled, auto_rollback_enabled: a.settings.autoRollbackEnabled,
        window_minutes: a.windowMinutes, window_start: a.windowStart.toISOString(), error_count: a.errorCount,
        uncounted_error_count: a.uncountedErrorCount, error_rate: a.errorRate, error_rate_threshold: a.threshold,
        threshold_exceeded: a.thresholdExceeded, would_roll_back: a.wouldRollBack, rollback_percentage: a.config.rollbackPercentage,
        last_rollback_at: a.config.lastRollbackAt?.toISOString() ?? null, checked_at: a.now.toISOString(),
      };
    },

    rollback: (actor: AuditActor, flagId: string, request: { percentage?: number; reason?: string }) =>
      rollback(actor, flagId, request, { automatic: false, now: clock.now() }),

    /**
     * Scheduler job: rolls back every monitored flag whose error rate is above its threshold, as the system actor.
     * A flag deleted meanwhile is skipped; any other failure fails the run after the other flags are done.
     */
    async runAutoRollback(now: Date): Promise<void> {
      if (!(await currentSettings()).autoRollbackEnabled) return;
      const failed: string[] = [];
      for (const config of await store.enabledConfigs(db)) {
        try {
          const a = await assess(config.flagId, now);
          if (!a.wouldRollBack) continue;
          const reason = `Automatic rollback: ${a.errorCount} counted errors in ${a.windowMinutes} minutes, above ${a.threshold} per minute`;
          await rollback(SYSTEM_ACTOR, config.flagId, { reason }, { automatic: true, now, errorRate: a.errorRate });
        } catch (error) {
          if (!(error instanceof DomainError)) failed.push(config.flagId);
        }
      }
      if (failed.length > 0) throw new Error(`Automatic rollback failed for flags ${failed.join(', ')}`);
    },
  };
}
