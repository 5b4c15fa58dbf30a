import type { Clock } from '../../platform/clock.js';
import { csvLine } from '../../platform/csv.js';
import { Unprocessable } from '../../platform/errors.js';
import { isIntact } from '../audit-logs/domain.js';
import { toChainEntry, type AuditLogsService, type EntryFilter, type SealedEntry } from '../audit-logs/service.js';
import { CONTROLS, type Framework } from './controls.js';
import type { ComplianceEvent, ComplianceReport, EventsQuery, ExportJson, ExportQuery } from './schemas.js';

const DAY_MS = 86_400_000;
export const MAX_EXPORT_EVENTS = 100_000;
export const EXPORT_TOO_LARGE = `An export holds at most ${MAX_EXPORT_EVENTS} events; choose a shorter period with start_time and end_time`;

const CSV_COLUMNS = [
  'sequence', 'id', 'timestamp', 'action', 'resource_type', 'resource_id', 'actor_id', 'actor_username',
  'before', 'after', 'details', 'previous_signature', 'hmac_signature', 'signature_valid',
] as const;

export type ComplianceService = ReturnType<typeof createComplianceService>;

/** The compliance view of the signed audit chain: verified events, framework reports and exports. */
export function createComplianceService(deps: { auditLogs: AuditLogsService; clock: Clock; signingKey: string }) {
  const toEvent = (sealed: SealedEntry): ComplianceEvent => {
    const { entry } = sealed;
    return {
      id: entry.id,
      sequence: sealed.sequence,
      timestamp: entry.createdAt.toISOString(),
      action: entry.action,
      resource_type: entry.entityType,
      resource_id: entry.entityId,
      actor_id: entry.actorId,
      actor_username: entry.actorUsername,
      before: entry.before,
      after: entry.after,
      details: entry.details,
      previous_signature: sealed.previousSignature,
      hmac_signature: sealed.signature,
      signature_valid: isIntact(
        deps.signingKey,
        toChainEntry(entry, sealed.sequence, sealed.previousSignature),
        sealed.signature,
        sealed.predecessorSignature,
      ),
    };
  };

  const range = (start?: string, end?: string): EntryFilter => ({
    from: start ? new Date(start) : undefined,
    to: end ? new Date(end) : undefined,
  });

  async function collect(filter: EntryFilter): Promise<ComplianceEvent[]> {
    const { total } = await deps.auditLogs.signedPage(filter, 0, 1);
    if (total > MAX_EXPORT_EVENTS) {
      throw new Unprocessable({ type: 'value_error', loc: ['query', 'start_time'], msg: EXPORT_TOO_LARGE });
    }
    const events: ComplianceEvent[] = [];
    await deps.auditLogs.forEachSigned(filter, (rows) => events.push(...rows.map(toEvent)));
    return events;
  }

  return {
    async events(query: EventsQuery) {
      const filter: EntryFilter = {
        ...range(query.start_time, query.end_time),
        action: query.action,
        entityType: query.resource_type,
        actorId: query.actor_id,
      };
      const { rows, total } = await deps.auditLogs.signedPage(filter, (query.page - 1) * query.limit, query.limit);
      return { items: rows.map(toEvent), total, page: query.page, limit: query.limit };
    },

    async report(framework: Framework, periodDays: number): Promise<ComplianceReport> {
      const end = deps.clock.now();
      const start = new Date(end.getTime() - periodDays * DAY_MS);
      const controls = CONTROLS[framework].map((control) => ({ control, count: 0, actions: new Set<string>() }));
      const byAction = new Map<string, number>();
      const actors = new Set<string>();
      const integrity = { events_checked: 0, intact: 0, tampered: 0, first_tampered_sequence: null as number | null };
      await deps.auditLogs.forEachSigned({ from: start, to: end }, (rows) => {
        for (const row of rows) {
          const event = toEvent(row);
          byAction.set(event.action, (byAction.get(event.action) ?? 0) + 1);
          if (event.actor_id) actors.add(event.actor_id);
          integrity.events_checked += 1;
          if (event.signature_valid) integrity.intact += 1;
          else {
            integrity.tampered += 1;
            integrity.first_tampered_sequence ??= event.sequence;
          }
          for (const c of controls) {
            if (!c.control.matches(event.action, event.resource_type)) continue;
            c.count += 1;
            c.actions.add(event.action);
          }
        }
      });
      return {
        framework,
        generated_at: end.toISOString(),
        period_start: start.toISOString(),
        period_end: end.toISOString(),
        period_days: periodDays,
        total_events: integrity.events_checked,
        unique_actors: actors.size,
        events_by_action: [...byAction].map(([action, count]) => ({ action, count })).sort((a, b) => b.count - a.count || a.action.localeCompare(b.action)),
        controls: controls.map((c) => ({
          control_id: c.control.id,
          title: c.control.title,
          evidence_count: c.count,
          evidence_actions: [...c.actions].sort(),
        })),
        integrity,
        notes: [
          'Evidence counts audit entries per control; the report does not assess whether a control is effective.',
          'Integrity: every event signature is recomputed with the compliance key and checked against the previous event.',
        ],
      };
    },

    async exportJson(query: ExportQuery): Promise<ExportJson> {
      const events = await collect(range(query.start_time, query.end_time));
      return {
        exported_at: deps.clock.now().toISOString(),
        start_time: query.start_time ?? null,
        end_time: query.end_time ?? null,
        count: events.length,
        events,
      };
    },

    async exportCsv(query: ExportQuery): Promise<string> {
      const events = await collect(range(query.start_time, query.end_time));
      let csv = csvLine(CSV_COLUMNS);
      for (const event of events) csv += csvLine(CSV_COLUMNS.map((column) => event[column]));
      return csv;
    },
  };
}
