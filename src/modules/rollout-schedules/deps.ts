/** What the rollout schedules module is given (service.ts and the stage advance in advance.ts take it alike). */
import type { DefinitionSettings } from '../../analysis/types.js';
import type { Db, Executor } from '../../db/client.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Clock } from '../../platform/clock.js';
import type { Loc } from '../../platform/errors.js';
import type { FlagsService } from '../feature-flags/service.js';
import type { MetricDefinitionsService } from '../metric-definitions/service.js';
import type { GroupUserValues, GuardrailCounts, GuardrailValueWindows, GuardrailWindows } from '../tracking/read-model.js';

export interface RolloutSchedulesDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  flags: Pick<FlagsService, 'getFlag' | 'changeRollout'>;
  /** The environment a new schedule names (absent: the default). */
  environments: { resolve(key: string | undefined, loc: Loc, unprocessable?: boolean): Promise<string> };
  /** Tracking's read model: guardrail event counts of the flag's exposed users and of the baseline. */
  guardrailCounts(windows: GuardrailWindows): Promise<GuardrailCounts>;
  /** Tracking's read model: per-user values of metric library guardrails, of the flag's exposed users and of the baseline. */
  guardrailUserValues(windows: GuardrailValueWindows): Promise<{ exposed: GroupUserValues; baseline: GroupUserValues }>;
  /**
   * The metric library: what the definitions a guardrail names say to analyse now, and the check of a write that
   * names them (422 unknown or not mean/ratio; share-locks them until the write's transaction commits).
   */
  definitions: {
    analysisSettings(ids: string[]): Promise<DefinitionSettings[]>;
    checkGuardrailDefinitions: MetricDefinitionsService['checkGuardrailDefinitions'];
  };
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
  /** Present when a guardrail of the schedule names a metric library definition: the degraded ones. */
  degraded_metric_definitions?: Array<{ id: string; name: string }>;
  /** The environment named on the schedule (null: the default environment). */
  environment: string | null;
}

