/** Warehouse sources: assignment and metric definitions over a connection's tables, and their validation. */
import { randomUUID } from 'node:crypto';
import type { WarehouseSourceRow } from '../../db/schema/warehouse.js';
import type { Actor } from '../../platform/auth.js';
import { Unprocessable, type ValidationIssue } from '../../platform/errors.js';
import { EDITORS, READERS, remainingSeconds, type WarehouseAccess, type WarehouseContext } from './access.js';
import { checkSource, type SourceFields } from './checks.js';
import { WarehouseError, type WarehouseSession } from './connectors/types.js';
import { cannotChange, requireRole, SOURCE_NOT_FOUND } from './errors.js';
import { parseTable } from './identifiers.js';
import type { SourceCreate, SourceUpdate, SourceView } from './schemas.js';
import * as store from './store.js';
import type { WarehouseType } from './types.js';
import { toSourceView, type SourceSnapshot } from './views.js';

export function createSources(ctx: WarehouseContext, access: WarehouseAccess) {
  const { db, audit, clock, config } = ctx;
  const { keys, connectionCredentials, connectionOr404, withJob, openSession } = access;

  async function sourceOr404(id: string): Promise<WarehouseSourceRow> {
    const row = await store.findSource(db, id);
    if (!row) throw SOURCE_NOT_FOUND();
    return row;
  }

  /** Spec "Authentication": metric sources are open to analysts (except delete); assignment sources are not. */
  function requireSourceRole(actor: Actor, kind: 'assignment' | 'metric', action: 'edit' | 'delete'): void {
    requireRole(actor, kind === 'metric' && action === 'edit' ? READERS : EDITORS);
  }

  /**
   * A PUT may repeat what a GET returned (GET-modify-PUT): a field that cannot change is accepted when it equals the
   * stored value and refused at its place otherwise; validation state and updated_at are the server's and ignored.
   */
  function checkUnchanged(row: WarehouseSourceRow, body: SourceUpdate): void {
    const issues: ValidationIssue[] = [];
    if (body.id !== undefined && body.id !== row.id) issues.push(cannotChange('id'));
    if (body.kind !== undefined && body.kind !== row.kind) issues.push(cannotChange('kind'));
    if (body.connection_id !== undefined && body.connection_id !== row.connectionId) issues.push(cannotChange('connection_id'));
    if (body.created_at !== undefined && new Date(body.created_at).getTime() !== row.createdAt.getTime()) issues.push(cannotChange('created_at'));
    // null is how a GET shows an assignment source's metric_type; a metric source always has one.
    if (body.metric_type === null && row.kind === 'metric') {
      issues.push({ type: 'enum', loc: ['body', 'metric_type'], msg: "Input should be 'proportion' or 'mean'", ctx: { expected: "'proportion' or 'mean'" } });
    }
    if (issues.length) throw new Unprocessable(issues);
  }

  return {
    sourceOr404,
    requireSourceRole,

    async listSources(): Promise<SourceView[]> {
      return (await store.listSources(db)).map(toSourceView);
    },

    async getSource(id: string): Promise<SourceView> {
      return toSourceView(await sourceOr404(id));
    },

    async createSource(actor: Actor, body: SourceCreate): Promise<SourceView> {
      requireSourceRole(actor, body.kind, 'edit');
      const connection = await store.findConnection(db, body.connection_id);
      if (!connection) throw new Unprocessable({ type: 'not_found', loc: ['body', 'connection_id'], msg: 'No warehouse connection has this id' });
      const source = { ...body, metric_type: body.kind === 'metric' ? (body.metric_type ?? 'proportion') : body.metric_type };
      checkSource(connection.warehouseType as WarehouseType, body.kind, source);
      return db.transaction(async (tx) => {
        const now = clock.now();
        const row = await store.insertSource(tx, {
          id: randomUUID(),
          connectionId: connection.id,
          kind: body.kind,
          name: body.name,
          tableName: body.table,
          columns: body.columns as Record<string, string>,
          metricType: source.metric_type ?? null,
          conversionWindowHours: body.conversion_window_hours ?? null,
          filters: (body.filters ?? []) as SourceSnapshot['filters'],
          capValue: body.cap_value ?? null,
          validationErrors: [],
          createdById: actor.id,
          createdAt: now,
          updatedAt: now,
        });
        await audit.record(tx, actor, { action: 'warehouse_source_create', entityType: 'warehouse_source', entityId: row.id, after: toSourceView(row) });
        return toSourceView(row);
      });
    },

    /** Any edit clears validation (spec "Warehouse source": validated -> unvalidated). */
    async updateSource(actor: Actor, id: string, body: SourceUpdate): Promise<SourceView> {
      return db.transaction(async (tx) => {
        const row = await store.findSource(tx, id, true);
        if (!row) throw SOURCE_NOT_FOUND();
        requireSourceRole(actor, row.kind, 'edit');
        checkUnchanged(row, body);
        const connection = await connectionOr404(row.connectionId, false, tx);
        const merged = {
          name: body.name ?? row.name,
          table: body.table ?? row.tableName,
          columns: body.columns ?? (row.columns as SourceFields['columns']),
          metric_type: body.metric_type ?? row.metricType ?? undefined,
          conversion_window_hours: body.conversion_window_hours !== undefined ? body.conversion_window_hours : row.conversionWindowHours,
          filters: body.filters ?? row.filters,
          cap_value: body.cap_value !== undefined ? body.cap_value : row.capValue,
        };
        checkSource(connection.warehouseType as WarehouseType, row.kind, merged);
        const updated = await store.updateSource(tx, id, {
          name: merged.name,
          tableName: merged.table,
          columns: merged.columns as Record<string, string>,
          metricType: merged.metric_type ?? null,
          conversionWindowHours: merged.conversion_window_hours ?? null,
          filters: merged.filters as SourceSnapshot['filters'],
          capValue: merged.cap_value ?? null,
          validatedAt: null,
          validationErrors: [],
          updatedAt: clock.now(),
        });
        await audit.record(tx, actor, {
          action: 'warehouse_source_update',
          entityType: 'warehouse_source',
          entityId: id,
          before: toSourceView(row),
          after: toSourceView(updated),
        });
        return toSourceView(updated);
      });
    },

    async deleteSource(actor: Actor, id: string): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await store.findSource(tx, id, true);
        if (!row) throw SOURCE_NOT_FOUND();
        requireSourceRole(actor, row.kind, 'delete');
        await store.deleteSource(tx, id);
        await audit.record(tx, actor, { action: 'warehouse_source_delete', entityType: 'warehouse_source', entityId: id, before: toSourceView(row) });
      });
    },

    /** Checks table and columns against the warehouse's metadata only (no data read), within 30 seconds (config.checkSeconds). */
    async validateSource(actor: Actor, id: string): Promise<{ valid: boolean; errors: string[] }> {
      const row = await sourceOr404(id);
      requireSourceRole(actor, row.kind, 'edit');
      keys();
      const connection = await connectionOr404(row.connectionId);
      const credentials = await connectionCredentials(connection);
      const type = connection.warehouseType as WarehouseType;
      const errors = await withJob(async () => {
        let session: WarehouseSession | undefined;
        try {
          // Sign-in, session setup and the metadata read share the 30 seconds.
          const started = performance.now();
          session = await openSession(type, connection.settings, credentials, config.checkSeconds);
          const columns = await session.columns(parseTable(type, row.tableName)!, remainingSeconds(config.checkSeconds, started));
          if (!columns) return ['The table does not exist, or this connection cannot see it'];
          const found: string[] = [];
          const lower = new Map([...columns].map(([name, dataType]) => [name, dataType.toLowerCase()]));
          for (const [key, column] of Object.entries(row.columns)) {
            const dataType = lower.get(column);
            if (dataType === undefined) found.push(`The ${key} column is not in the table`);
            else if ((key === 'exposed_at' || key === 'event_at') && !/time|date/.test(dataType)) found.push(`The ${key} column is not a date or time`);
            else if (key === 'value' && !/int|float|double|decimal|numeric|real|number/.test(dataType)) found.push('The value column is not numeric');
          }
          row.filters.forEach((f, i) => {
            if (!lower.has(f.column)) found.push(`The column of filter ${i + 1} is not in the table`);
          });
          return found;
        } catch (error) {
          return [error instanceof WarehouseError ? error.message : 'Could not read the table metadata'];
        } finally {
          await session?.close().catch(() => undefined);
        }
      });
      await db.transaction(async (tx) => {
        const current = await store.findSource(tx, id, true);
        // An edit while the check ran changed what was checked: its result no longer applies.
        if (!current || current.updatedAt.getTime() !== row.updatedAt.getTime()) return;
        await store.updateSource(tx, id, { validatedAt: errors.length ? null : clock.now(), validationErrors: errors });
        await audit.record(tx, actor, { action: 'warehouse_source_validate', entityType: 'warehouse_source', entityId: id, details: { valid: errors.length === 0, errors } });
      });
      return { valid: errors.length === 0, errors };
    },
  };
}
