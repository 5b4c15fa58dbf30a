import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { ErrorReportRow, ErrorReportSource } from '../../db/schema/error-reports.js';
import { hasRole, type KeyClient } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { NotFound } from '../../platform/errors.js';
import type { ErrorReportBatchBody, ErrorReportBatchView, ErrorReportBody, ErrorReportView } from './schemas.js';
import * as store from './store.js';

export const UNKNOWN_FLAG_KEY = 'No feature flag has that feature_flag_key.';

/**
 * Spec, tracking rule 7: only a key with scope `sdk:ruleset` whose owner can change flags (ADMIN, DEVELOPER or a
 * superuser) is trusted to count toward a flag's error rate; any other key could otherwise force a rollback.
 */
export function countsTowardRollback(client: KeyClient): boolean {
  return client.scopes.includes('sdk:ruleset') && hasRole({ role: client.ownerRole, isSuperuser: client.ownerIsSuperuser }, 'ADMIN', 'DEVELOPER');
}

function toView(row: ErrorReportRow, flagKey: string | undefined): ErrorReportView {
  return {
    id: row.id,
    error_type: row.errorType,
    message: row.message,
    feature_flag_key: flagKey ?? null,
    feature_flag_id: row.flagId,
    user_id: row.userId,
    request_data: row.requestData,
    source: row.requestData.source as ErrorReportSource,
    counted: row.counted,
    created_at: row.createdAt.toISOString(),
  };
}

export interface ErrorReportsDeps {
  db: Db;
  clock: Clock;
  /** The flag with this key (the flags service's compiled ruleset), or undefined. */
  flags: { idByKey(key: string): Promise<string | undefined> };
}

export type ErrorReportsService = ReturnType<typeof createErrorReportsService>;

export function createErrorReportsService(deps: ErrorReportsDeps) {
  const { db, clock } = deps;

  function toRow(client: KeyClient, body: ErrorReportBody, flagId: string | undefined, now: Date) {
    const counted = countsTowardRollback(client);
    const source: ErrorReportSource = counted ? 'sdk' : 'client';
    return {
      id: randomUUID(),
      flagId: flagId ?? null,
      counted,
      errorType: body.error_type,
      message: body.message ?? null,
      userId: body.user_id ?? null,
      // The server decides the source: a client cannot claim to be trusted through its own request_data.
      requestData: { ...body.request_data, source },
      apiKeyId: client.keyId,
      createdAt: now,
    };
  }

  async function resolve(keys: Array<string | undefined>): Promise<Map<string, string | undefined>> {
    const distinct = [...new Set(keys.filter((k): k is string => k !== undefined))];
    return new Map(await Promise.all(distinct.map(async (k) => [k, await deps.flags.idByKey(k)] as const)));
  }

  return {
    async report(client: KeyClient, body: ErrorReportBody): Promise<ErrorReportView> {
      const flagId = body.feature_flag_key === undefined ? undefined : await deps.flags.idByKey(body.feature_flag_key);
      if (body.feature_flag_key !== undefined && !flagId) throw new NotFound(UNKNOWN_FLAG_KEY);
      const [row] = await store.insertReports(db, [toRow(client, body, flagId, clock.now())]);
      return toView(row, body.feature_flag_key);
    },

    /** Valid reports are stored (one statement), invalid ones listed with their position, as tracking batches do. */
    async reportBatch(client: KeyClient, body: ErrorReportBatchBody): Promise<ErrorReportBatchView> {
      const flagIds = await resolve(body.reports.map((r) => r.feature_flag_key));
      const now = clock.now();
      const rows: ReturnType<typeof toRow>[] = [];
      const results: ErrorReportBatchView['results'] = [];
      const errors: ErrorReportBatchView['errors'] = [];
      for (const [index, report] of body.reports.entries()) {
        const flagId = report.feature_flag_key === undefined ? undefined : flagIds.get(report.feature_flag_key);
        if (report.feature_flag_key !== undefined && !flagId) {
          results.push({ index, success: false, error: UNKNOWN_FLAG_KEY });
          errors.push({ index, error: UNKNOWN_FLAG_KEY });
          continue;
        }
        const row = toRow(client, report, flagId, now);
        rows.push(row);
        results.push({ index, success: true, id: row.id });
      }
      await store.insertReports(db, rows);
      return { received: body.reports.length, stored: rows.length, failed: errors.length, counted: countsTowardRollback(client), results, errors };
    },

    /** Reports of one flag in (since, until]: counted (trusted) and uncounted. */
    countsForFlag: (flagId: string, since: Date, until: Date) => store.countsForFlag(db, flagId, since, until),

    /** Every report in (since, until], in total and for the flags with most counted errors. */
    countsInWindow: (since: Date, until: Date, flagLimit: number) => store.countsInWindow(db, since, until, flagLimit),
  };
}
