import type { Clock } from '../../platform/clock.js';
import type { ErrorReportsService } from '../error-reports/service.js';
import type { SafetyService } from '../safety/service.js';
import type { Summary, SummaryQuery } from './schemas.js';

const MINUTE_MS = 60_000;
const FLAG_LIMIT = 100;

export interface MetricsDeps {
  clock: Clock;
  errorReports: Pick<ErrorReportsService, 'countsInWindow'>;
  safety: Pick<SafetyService, 'currentSettings'>;
  /** Current key of each flag by id (the flags service's compiled ruleset). */
  flags: { keysById(): Promise<Map<string, string>> };
}

export type MetricsService = ReturnType<typeof createMetricsService>;

export function createMetricsService(deps: MetricsDeps) {
  return {
    /** Error reports over the window: the same error rate definition as the safety check, across all reports. */
    async summary(query: SummaryQuery): Promise<Summary> {
      const now = deps.clock.now();
      const windowMinutes = query.window_minutes ?? (await deps.safety.currentSettings()).windowMinutes;
      const since = new Date(now.getTime() - windowMinutes * MINUTE_MS);
      const [{ total, perFlag }, keys] = await Promise.all([deps.errorReports.countsInWindow(since, now, FLAG_LIMIT), deps.flags.keysById()]);
      const counts = (c: { counted: number; uncounted: number }) => ({
        error_count: c.counted, error_rate: c.counted / windowMinutes, uncounted_error_count: c.uncounted,
      });
      return {
        window_minutes: windowMinutes,
        window_start: since.toISOString(),
        generated_at: now.toISOString(),
        ...counts(total),
        // A flag another process created a moment ago may not be in this process's ruleset yet: listed next time.
        flags: perFlag.flatMap((f) => {
          const key = keys.get(f.flagId);
          return key === undefined ? [] : [{ flag_id: f.flagId, flag_key: key, ...counts(f) }];
        }),
      };
    },
  };
}
