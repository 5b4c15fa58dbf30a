/** What the rollout schedules module is given (service.ts and the stage advance in advance.ts take it alike). */
import type { Db } from '../../db/client.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Clock } from '../../platform/clock.js';
import type { Loc } from '../../platform/errors.js';
import type { FlagsService } from '../feature-flags/service.js';
import type { GuardrailCounts, GuardrailWindows } from '../tracking/read-model.js';

export interface RolloutSchedulesDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  flags: Pick<FlagsService, 'getFlag' | 'changeRollout'>;
  /** The environment a new schedule names (absent: the default). */
  environments: { resolve(key: string | undefined, loc: Loc, unprocessable?: boolean): Promise<string> };
  /** Tracking's read model: guardrail event counts of the flag's exposed users and of the baseline. */
  guardrailCounts(windows: GuardrailWindows): Promise<GuardrailCounts>;
  /** Alerts subscribers of every guardrail decision (notifications); never throws. */
  announce(notice: GuardrailNotice): void;
}

export interface GuardrailNotice {
  schedule_id: string;
  schedule_name: string;
  flag_id: string;
  flag_key: string;
  decision: 'advance' | 'rollback';
  rollout_percentage: number;
  degraded_metrics: string[];
  /** The environment named on the schedule (null: the default environment). */
  environment: string | null;
}

