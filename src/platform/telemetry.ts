/**
 * What the service reports about its own work, as Node diagnostics channels: components publish plain facts here
 * and know nothing of Prometheus or tracing; `platform/metrics.ts` subscribes. Publishing with no subscriber is a
 * single property read, so hot paths pay nothing when metrics are not collected.
 */
import { channel } from 'node:diagnostics_channel';

export interface FlagsEvaluated { flags: number }
export interface AssignmentsMade { outcome: string; count: number }
export interface EventsIngested { accepted: number; rejected: number }
export interface BatchWritten { writer: string; rows: number }
export interface JobRan { job: string; ok: boolean; seconds: number }

export const telemetry = {
  flagsEvaluated: channel('uplift.flags.evaluated'),
  rulesetLoaded: channel('uplift.flags.ruleset_loaded'),
  assignments: channel('uplift.tracking.assignments'),
  events: channel('uplift.tracking.events'),
  batchWritten: channel('uplift.writer.batch'),
  jobRan: channel('uplift.scheduler.job'),
};

export function report<T extends object>(target: (typeof telemetry)[keyof typeof telemetry], message: T): void {
  if (target.hasSubscribers) target.publish(message);
}
