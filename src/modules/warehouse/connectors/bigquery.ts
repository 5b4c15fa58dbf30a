import type { BoundParam, Statement, TableRef } from '../types.js';
import { failure, lazyModule, openTimeoutMessage, WarehouseError, withTimeout, type Driver, type FailureCode, type StatementResult, type WarehouseSession } from './types.js';

const bigquery = lazyModule(() => import('@google-cloud/bigquery'));

const PARAM_TYPES: Record<BoundParam['type'], string> = {
  timestamp: 'TIMESTAMP',
  text: 'STRING',
  integer: 'INT64',
  float: 'FLOAT64',
  boolean: 'BOOL',
};

/** Google's answers for credentials it refused: the token exchange (invalid_grant) or HTTP 401. */
function recognise(error: unknown): FailureCode | undefined {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 401 || (typeof message === 'string' && message.startsWith('invalid_grant')) ? 'authentication_failed' : undefined;
}

export const bigqueryDriver: Driver = {
  type: 'bigquery',
  billsByBytes: true,
  keyPair: false,
  settings: {
    // The project the service account's jobs run and bill in, and the region they run in.
    project_id: { kind: 'string', required: true, maxLength: 128, endpoint: true },
    location: { kind: 'string', maxLength: 64, endpoint: true },
  },
  credentials: {
    client_email: { kind: 'string', required: true, maxLength: 320 },
    private_key: { kind: 'string', required: true, maxLength: 8192 },
  },
  load: async () => (await bigquery()) !== undefined,
  async open(settings, credentials, options): Promise<WarehouseSession> {
    const api = await bigquery();
    if (!api) throw new WarehouseError('connector_unavailable', 'The BigQuery driver is not installed');
    const location = typeof settings.location === 'string' ? settings.location : undefined;
    const client = new api.BigQuery({
      projectId: String(settings.project_id),
      location,
      credentials: { client_email: credentials.client_email, private_key: credentials.private_key },
    });
    let running: { cancel(): Promise<unknown> } | undefined;

    async function execute(statement: Statement, timeoutSeconds: number, maxBytes: number | undefined, code: 'query_failed' | 'connection_failed') {
      const params = Object.fromEntries(statement.params.map((p, i) => [`p${i + 1}`, p.value instanceof Date ? p.value.toISOString() : p.value]));
      const types = Object.fromEntries(statement.params.map((p, i) => [`p${i + 1}`, PARAM_TYPES[p.type]]));
      const request = { query: statement.text, params, types, location, useLegacySql: false, jobTimeoutMs: timeoutSeconds * 1000 };
      try {
        let estimated: number | undefined;
        if (maxBytes !== undefined) {
          // Spec rule 5: a dry run prices the statement first; over the cap it never runs.
          const [dry] = await client.createQueryJob({ ...request, dryRun: true });
          estimated = Number(dry.metadata?.statistics?.totalBytesProcessed ?? 0);
          if (estimated > maxBytes) {
            throw new WarehouseError('bytes_limit_exceeded', `The statement would read ${estimated} bytes, over the limit of ${maxBytes}`);
          }
        }
        const [job] = await client.createQueryJob({ ...request, ...(maxBytes !== undefined ? { maximumBytesBilled: String(maxBytes) } : {}) });
        running = job;
        const [rows] = await withTimeout(timeoutSeconds, job.getQueryResults({ timeoutMs: timeoutSeconds * 1000 }), () => job.cancel());
        const [metadata] = await job.getMetadata();
        const billed = metadata?.statistics?.query?.totalBytesBilled;
        return { rows: rows as Record<string, unknown>[], jobId: job.id, bytesBilled: billed === undefined ? estimated : Number(billed) };
      } catch (error) {
        if (/bytesBilledLimitExceeded/i.test(String((error as Error).message))) {
          throw new WarehouseError('bytes_limit_exceeded', 'The statement would bill more bytes than the limit');
        }
        throw failure(code, error, recognise);
      } finally {
        running = undefined;
      }
    }

    // Only the results are bounded inside execute; submitting the job is an HTTP call with its own retries, so the
    // first statement (which proves the credentials) gets one bound as a whole.
    await withTimeout(
      options.connectTimeoutSeconds,
      execute({ text: 'SELECT 1', params: [] }, options.connectTimeoutSeconds, undefined, 'connection_failed'),
      () => running?.cancel(),
      openTimeoutMessage(options.connectTimeoutSeconds),
    );
    return {
      async ping(timeoutSeconds) {
        await execute({ text: 'SELECT 1', params: [] }, timeoutSeconds, undefined, 'query_failed');
      },
      async columns(table: TableRef) {
        const [project, dataset, name] = table;
        try {
          const [metadata] = await client.dataset(dataset, { projectId: project }).table(name).getMetadata();
          const fields = (metadata?.schema?.fields ?? []) as Array<{ name: string; type: string }>;
          return new Map(fields.map((f) => [f.name, f.type]));
        } catch (error) {
          if ((error as { code?: number }).code === 404) return undefined;
          throw failure('query_failed', error, recognise);
        }
      },
      async run(statement, limits): Promise<StatementResult> {
        const started = performance.now();
        const result = await execute(statement, limits.timeoutSeconds, limits.maxBytes, 'query_failed');
        return { ...result, elapsedMs: Math.round(performance.now() - started) };
      },
      cancel: async () => {
        await running?.cancel();
      },
      close: async () => undefined,
    };
  },
};
