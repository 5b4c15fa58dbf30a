import {
  BatchCreatePartitionCommand,
  GetCrawlerCommand,
  GetJobRunCommand,
  GetTableCommand,
  GlueClient,
  StartCrawlerCommand,
  StartJobRunCommand,
} from '@aws-sdk/client-glue';
import type { EtlConfig } from '../../config.js';
import type { Db } from '../../db/client.js';
import type { AuditLog } from '../../platform/audit.js';
import type { Actor } from '../../platform/auth.js';
import { Conflict, InternalError, NotFound, Unprocessable } from '../../platform/errors.js';
import { DATE_FORMAT_MESSAGE, hourlyPartitionValues, parseCalendarDate, partitionLocation } from './partitions.js';
import type { CrawlerStatus, JobRunStatus, PartitionsAdded } from './schemas.js';

export const UNKNOWN_JOB = 'Unknown ETL job';
export const UNKNOWN_CRAWLER = 'Unknown crawler';
export const UNKNOWN_TABLE = 'Unknown Glue table';
export const JOB_RUN_NOT_FOUND = 'Job run not found';
export const TABLE_NOT_FOUND = 'Glue table not found';
export const CRAWLER_RUNNING = 'The crawler is already running';
export const NOT_HOURLY = 'The table is not partitioned by day and hour (dt or year/month/day, plus hour)';

const isNamed = (error: unknown, name: string) => (error as { name?: string }).name === name;

/** Node's codes for an endpoint that cannot be reached or went away, and the SDK's for one that never answered. */
const NO_ANSWER_CODES = new Set(['ETIMEDOUT', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

function noAnswer(error: unknown): string | undefined {
  const { name, code, $metadata } = error as { name?: string; code?: string; $metadata?: { attempts?: number } };
  if (name !== 'TimeoutError' && !(code && NO_ANSWER_CODES.has(code))) return undefined;
  return `AWS Glue could not be reached or did not answer in time (${code ?? name}, ${$metadata?.attempts ?? 1} attempts)`;
}

/** What the ETL service uses of a Glue client. */
export type Glue = Pick<GlueClient, 'send'>;

/**
 * The Glue client, made on first use: constructing an AWS SDK client prints the SDK's Node version notice, which
 * a service that never calls Glue has no reason to show at every start.
 */
export function createGlueClient(config: EtlConfig): Glue {
  let client: GlueClient | undefined;
  return { send: ((command: Parameters<GlueClient['send']>[0]) => (client ??= makeGlueClient(config)).send(command)) as GlueClient['send'] };
}

function makeGlueClient(config: EtlConfig): GlueClient {
  const client = new GlueClient({
    region: config.region,
    endpoint: config.glueEndpoint,
    credentials: config.credentials,
    maxAttempts: 3,
    // Without throwOnRequestTimeout the SDK only logs a warning when requestTimeout passes and keeps waiting, so an
    // endpoint that never answers would hold the request forever; with it, each attempt ends in a TimeoutError.
    requestHandler: { connectionTimeout: config.connectionTimeoutMs, requestTimeout: config.requestTimeoutMs, throwOnRequestTimeout: true },
  });
  // Around the retries: Glue giving no answer at all is the routes' documented failure of the cloud call (500 with a
  // request id, spec), logged as what it is. Its network error codes would otherwise read as the database being down.
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const reason = noAnswer(error);
        throw reason ? new InternalError(reason) : error;
      }
    },
    { step: 'initialize', name: 'glueNoAnswer' },
  );
  return client;
}

export type EtlService = ReturnType<typeof createEtlService>;

/**
 * AWS Glue helpers. Only the job types, crawlers and tables named in the configuration are accepted, so the API
 * cannot be used to drive arbitrary jobs in the account. Every start and registration is audited.
 */
export function createEtlService(deps: { db: Db; audit: AuditLog; config: EtlConfig; glue: Glue }) {
  const { config, glue } = deps;

  /** The configured Glue job of a job type; own keys only, so `__proto__` or `toString` never resolve to anything. */
  const configuredJob = (jobType: string): string | undefined =>
    Object.hasOwn(config.jobs, jobType) && typeof config.jobs[jobType] === 'string' ? config.jobs[jobType] : undefined;

  function glueJobName(name: string): string {
    const job = configuredJob(name) ?? Object.values(config.jobs).find((j) => j === name);
    if (!job) throw new NotFound(UNKNOWN_JOB);
    return job;
  }

  function configuredCrawler(name: string): string {
    if (!config.crawlers.includes(name)) throw new NotFound(UNKNOWN_CRAWLER);
    return name;
  }

  return {
    async runJob(actor: Actor, jobType: string) {
      const job = configuredJob(jobType);
      if (!job) throw new NotFound(UNKNOWN_JOB);
      const { JobRunId } = await glue.send(new StartJobRunCommand({ JobName: job }));
      if (!JobRunId) throw new InternalError('Glue returned no job run id');
      await deps.audit.record(deps.db, actor, {
        action: 'etl_job_run',
        entityType: 'etl_job',
        entityId: job,
        details: { job_type: jobType, run_id: JobRunId },
      });
      return { run_id: JobRunId, job_type: jobType, job_name: job, status: 'STARTING' };
    },

    async jobStatus(runId: string, jobName: string): Promise<JobRunStatus> {
      const job = glueJobName(jobName);
      try {
        const { JobRun } = await glue.send(new GetJobRunCommand({ JobName: job, RunId: runId }));
        if (!JobRun) throw new NotFound(JOB_RUN_NOT_FOUND);
        return {
          run_id: runId,
          job_name: job,
          status: JobRun.JobRunState ?? 'UNKNOWN',
          started_on: JobRun.StartedOn?.toISOString() ?? null,
          completed_on: JobRun.CompletedOn?.toISOString() ?? null,
          execution_time_seconds: JobRun.ExecutionTime ?? null,
          error_message: JobRun.ErrorMessage ?? null,
        };
      } catch (error) {
        if (isNamed(error, 'EntityNotFoundException')) throw new NotFound(JOB_RUN_NOT_FOUND);
        throw error;
      }
    },

    async runCrawler(actor: Actor, name: string) {
      const crawler = configuredCrawler(name);
      try {
        await glue.send(new StartCrawlerCommand({ Name: crawler }));
      } catch (error) {
        if (isNamed(error, 'CrawlerRunningException')) throw new Conflict(CRAWLER_RUNNING);
        throw error;
      }
      await deps.audit.record(deps.db, actor, { action: 'etl_crawler_run', entityType: 'etl_crawler', entityId: crawler });
      return { crawler_name: crawler, status: 'STARTED' };
    },

    async crawlerStatus(name: string): Promise<CrawlerStatus> {
      const { Crawler } = await glue.send(new GetCrawlerCommand({ Name: configuredCrawler(name) }));
      const last = Crawler?.LastCrawl;
      return {
        crawler_name: name,
        state: Crawler?.State ?? 'UNKNOWN',
        last_crawl: last
          ? { status: last.Status ?? 'UNKNOWN', error_message: last.ErrorMessage ?? null, started_at: last.StartTime?.toISOString() ?? null }
          : null,
      };
    },

    /**
     * Registers the day's 24 hourly partitions. Spec: 201 only when every partition is registered or was already
     * there; a Glue failure to read the table or register a partition is a 500 (with the request id).
     */
    async addPartitions(actor: Actor, database: string, table: string, dateText: string): Promise<PartitionsAdded> {
      if (!config.tables.includes(`${database}.${table}`)) throw new NotFound(UNKNOWN_TABLE);
      const date = parseCalendarDate(dateText);
      if (!date) throw new Unprocessable({ type: 'value_error', loc: ['query', 'date'], msg: DATE_FORMAT_MESSAGE });
      let tableInfo;
      try {
        tableInfo = (await glue.send(new GetTableCommand({ DatabaseName: database, Name: table }))).Table;
      } catch (error) {
        if (isNamed(error, 'EntityNotFoundException')) throw new NotFound(TABLE_NOT_FOUND);
        throw error;
      }
      const keys = (tableInfo?.PartitionKeys ?? []).map((k) => k.Name ?? '');
      const valueLists = hourlyPartitionValues(keys, date);
      const descriptor = tableInfo?.StorageDescriptor;
      if (!valueLists || !descriptor?.Location) throw new Conflict(NOT_HOURLY);
      const partitions = valueLists.map((values) => ({
        Values: values,
        StorageDescriptor: { ...descriptor, Location: partitionLocation(descriptor.Location!, keys, values) },
      }));
      const { Errors = [] } = await glue.send(
        new BatchCreatePartitionCommand({ DatabaseName: database, TableName: table, PartitionInputList: partitions }),
      );
      const refused = Errors.filter((e) => e.ErrorDetail?.ErrorCode !== 'AlreadyExistsException');
      if (refused.length > 0) {
        throw new InternalError(`Glue refused ${refused.length} partitions: ${refused[0].ErrorDetail?.ErrorCode ?? 'unknown error'}`);
      }
      const existing = new Set(Errors.map((e) => JSON.stringify(e.PartitionValues ?? [])));
      const result: PartitionsAdded = {
        database,
        table,
        date: dateText,
        created: partitions.length - existing.size,
        already_present: existing.size,
        partitions: partitions.map((p) => ({
          values: p.Values,
          location: p.StorageDescriptor.Location,
          status: existing.has(JSON.stringify(p.Values)) ? 'already_present' : 'created',
        })),
      };
      await deps.audit.record(deps.db, actor, {
        action: 'etl_partitions_add',
        entityType: 'glue_table',
        entityId: `${database}.${table}`,
        details: { date: dateText, created: result.created, already_present: result.already_present },
      });
      return result;
    },
  };
}
