import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpliftApp } from '../../src/app.js';
import { DATE_FORMAT_MESSAGE } from '../../src/modules/etl/partitions.js';
import { CRAWLER_RUNNING, JOB_RUN_NOT_FOUND, NOT_HOURLY, TABLE_NOT_FOUND, UNKNOWN_CRAWLER, UNKNOWN_JOB, UNKNOWN_TABLE } from '../../src/modules/etl/service.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { glueEnv, startHttpServer, type ReceivedRequest } from '../helpers/fakes.js';

/**
 * A fake of the Glue API (AWS JSON 1.1: POST / with X-Amz-Target: AWSGlue.<Operation>). Tables: `events` (dt, hour),
 * `hive` (year, month, day, hour), `flat` (no partition keys), `refusing` (registration refused), `unreadable`
 * (GetTable fails); any other table does not exist.
 */
function fakeGlue() {
  const runs = new Set<string>();
  const partitions = new Map<string, Set<string>>();
  let nextRun = 0;
  const error = (type: string, status = 400) => ({ status, body: { __type: type, Message: `${type} (fake)` } });
  const ok = (body: unknown) => ({ status: 200, body, headers: { 'content-type': 'application/x-amz-json-1.1' } });
  const table = (name: string, keys: string[]) => ({
    Name: name,
    PartitionKeys: keys.map((k) => ({ Name: k, Type: 'string' })),
    StorageDescriptor: {
      Location: `s3://lake/${name}/`,
      Columns: [{ Name: 'event_name', Type: 'string' }],
      InputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
      SerdeInfo: { SerializationLibrary: 'org.openx.data.jsonserde.JsonSerDe' },
    },
  });
  const tables: Record<string, ReturnType<typeof table>> = {
    events: table('events', ['dt', 'hour']),
    hive: table('hive', ['year', 'month', 'day', 'hour']),
    flat: table('flat', []),
    refusing: table('refusing', ['dt', 'hour']),
  };
  return (request: ReceivedRequest) => {
    const operation = String(request.headers['x-amz-target']).replace('AWSGlue.', '');
    const input = JSON.parse(request.body || '{}');
    switch (operation) {
      case 'StartJobRun': {
        const id = `jr_${++nextRun}`;
        runs.add(`${input.JobName}/${id}`);
        return ok({ JobRunId: id });
      }
      case 'GetJobRun':
        return runs.has(`${input.JobName}/${input.RunId}`)
          ? ok({ JobRun: { Id: input.RunId, JobName: input.JobName, JobRunState: 'RUNNING', StartedOn: 1_717_200_000, ExecutionTime: 42 } })
          : error('EntityNotFoundException');
      case 'StartCrawler':
        return input.Name === 'busy-crawler' ? error('CrawlerRunningException') : ok({});
      case 'GetCrawler':
        return ok({ Crawler: { Name: input.Name, State: 'READY', LastCrawl: { Status: 'SUCCEEDED', StartTime: 1_717_200_000 } } });
      case 'GetTable':
        if (input.Name === 'unreadable') return error('InternalServiceException', 500);
        return tables[input.Name] ? ok({ Table: tables[input.Name] }) : error('EntityNotFoundException');
      case 'BatchCreatePartition': {
        const existing = partitions.get(input.TableName) ?? new Set<string>();
        partitions.set(input.TableName, existing);
        const errors = [];
        for (const p of input.PartitionInputList as Array<{ Values: string[] }>) {
          const key = p.Values.join('/');
          if (input.TableName === 'refusing' && p.Values[1] === '13') {
            errors.push({ PartitionValues: p.Values, ErrorDetail: { ErrorCode: 'ResourceNumberLimitExceededException' } });
          } else if (existing.has(key)) {
            errors.push({ PartitionValues: p.Values, ErrorDetail: { ErrorCode: 'AlreadyExistsException' } });
          } else existing.add(key);
        }
        return ok({ Errors: errors });
      }
      default:
        return error('UnknownOperationException');
    }
  };
}

let glue: Awaited<ReturnType<typeof startHttpServer>>;
let t: TestApp;
let unconfigured: UpliftApp;
let developer: TestUser;
let viewer: TestUser;

beforeAll(async () => {
  glue = await startHttpServer(fakeGlue());
  t = await testApp({
    env: glueEnv(glue.url, {
      ETL_GLUE_CRAWLERS: 'events-crawler,busy-crawler',
      ETL_GLUE_TABLES: 'lake.events,lake.hive,lake.flat,lake.refusing,lake.unreadable,lake.missing',
    }),
  });
  unconfigured = await t.spawn({ ETL_GLUE_ENDPOINT: glue.url, AWS_ACCESS_KEY_ID: 'AKIDTEST', AWS_SECRET_ACCESS_KEY: 'secret' });
  [developer, viewer] = await Promise.all([t.user({ role: 'DEVELOPER' }), t.user({ role: 'VIEWER' })]);
});
afterAll(async () => {
  await t.close();
  await glue.close();
});

const call = (method: 'GET' | 'POST', url: string, user?: TestUser, payload?: unknown, app = t.app) =>
  app.inject({ method, url, headers: user?.headers, ...(payload === undefined ? {} : { payload: payload as object }) });

describe('Glue jobs', () => {
  it('starts a configured job, reports its run and audits the start', async () => {
    const res = await call('POST', '/api/v1/etl/jobs/run', developer, { job_type: 'daily_rollup' });
    expect(res.statusCode).toBe(200);
    const run = res.json();
    expect(run).toMatchObject({ job_type: 'daily_rollup', job_name: 'uplift-daily-rollup', status: 'STARTING' });
    const sent = glue.requests.at(-1)!;
    expect(sent.headers['x-amz-target']).toBe('AWSGlue.StartJobRun');
    expect(sent.headers.authorization).toContain('Credential=AKIDTEST/');
    expect(JSON.parse(sent.body)).toEqual({ JobName: 'uplift-daily-rollup' });
    const status = await call('GET', `/api/v1/etl/jobs/${run.run_id}/status?job_name=daily_rollup`, developer);
    expect(status.json()).toEqual({
      run_id: run.run_id,
      job_name: 'uplift-daily-rollup',
      status: 'RUNNING',
      started_on: '2024-06-01T00:00:00.000Z',
      completed_on: null,
      execution_time_seconds: 42,
      error_message: null,
    });
    expect((await call('GET', `/api/v1/etl/jobs/${run.run_id}/status?job_name=uplift-daily-rollup`, developer)).statusCode).toBe(200);
    const audit = await call('GET', `/api/v1/audit-logs/?action=etl_job_run&actor_id=${developer.id}`, developer);
    expect(audit.json().items[0].details).toEqual({ job_type: 'daily_rollup', run_id: run.run_id });
  });

  it('answers the exact 404s for unknown jobs and runs', async () => {
    const unknown = await call('POST', '/api/v1/etl/jobs/run', developer, { job_type: 'uplift-other' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ detail: UNKNOWN_JOB });
    expect((await call('GET', '/api/v1/etl/jobs/jr_1/status?job_name=other', developer)).json()).toEqual({ detail: UNKNOWN_JOB });
    const run = await call('GET', '/api/v1/etl/jobs/jr_999/status?job_name=daily_rollup', developer);
    expect(run.statusCode).toBe(404);
    expect(run.json()).toEqual({ detail: JOB_RUN_NOT_FOUND });
  });

  it('refuses VIEWER, missing tokens and bad bodies', async () => {
    expect((await call('POST', '/api/v1/etl/jobs/run', viewer, { job_type: 'daily_rollup' })).statusCode).toBe(403);
    expect((await call('POST', '/api/v1/etl/jobs/run', undefined, { job_type: 'daily_rollup' })).statusCode).toBe(401);
    const bad = await call('POST', '/api/v1/etl/jobs/run', developer, { job: 'x' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type])).toEqual(
      expect.arrayContaining([[['body', 'job_type'], 'missing'], [['body', 'job'], 'extra_forbidden']]),
    );
    expect((await call('GET', '/api/v1/etl/jobs/jr_1/status', developer)).statusCode).toBe(422);
  });
});

describe('Glue crawlers', () => {
  it('starts a configured crawler and reports its state', async () => {
    const res = await call('POST', '/api/v1/etl/crawler/run', developer, { crawler_name: 'events-crawler' });
    expect(res.json()).toEqual({ crawler_name: 'events-crawler', status: 'STARTED' });
    const status = await call('GET', '/api/v1/etl/crawler/status?crawler_name=events-crawler', developer);
    expect(status.json()).toEqual({
      crawler_name: 'events-crawler',
      state: 'READY',
      last_crawl: { status: 'SUCCEEDED', error_message: null, started_at: '2024-06-01T00:00:00.000Z' },
    });
  });

  it('refuses unknown crawlers with 404 and a running one with 409', async () => {
    const unknown = await call('POST', '/api/v1/etl/crawler/run', developer, { crawler_name: 'other' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ detail: UNKNOWN_CRAWLER });
    expect((await call('GET', '/api/v1/etl/crawler/status?crawler_name=other', developer)).json()).toEqual({ detail: UNKNOWN_CRAWLER });
    const busy = await call('POST', '/api/v1/etl/crawler/run', developer, { crawler_name: 'busy-crawler' });
    expect(busy.statusCode).toBe(409);
    expect(busy.json()).toEqual({ detail: CRAWLER_RUNNING });
    expect((await call('GET', '/api/v1/etl/crawler/status?crawler_name=events-crawler', viewer)).statusCode).toBe(403);
    expect((await call('GET', '/api/v1/etl/crawler/status', developer)).statusCode).toBe(422);
  });
});

describe('partitions', () => {
  const add = (query: string, user = developer) => call('POST', `/api/v1/etl/partitions/add?${query}`, user);

  it('registers 24 hourly partitions, then finds them present', async () => {
    const res = await add('database=lake&table=events&date=2024-02-29');
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ database: 'lake', table: 'events', date: '2024-02-29', created: 24, already_present: 0 });
    expect(body.partitions).toHaveLength(24);
    expect(body.partitions[0]).toEqual({ values: ['2024-02-29', '00'], location: 's3://lake/events/dt=2024-02-29/hour=00/', status: 'created' });
    expect(body.partitions[23].values).toEqual(['2024-02-29', '23']);
    const sent = JSON.parse(glue.requests.at(-1)!.body);
    expect(sent.PartitionInputList[5].StorageDescriptor).toMatchObject({
      Location: 's3://lake/events/dt=2024-02-29/hour=05/',
      InputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
    });
    const again = await add('database=lake&table=events&date=2024-02-29');
    expect(again.statusCode).toBe(201);
    expect(again.json()).toMatchObject({ created: 0, already_present: 24 });
  });

  it('fills year/month/day/hour keys', async () => {
    const res = await add('database=lake&table=hive&date=2024-12-31');
    expect(res.json().partitions[7]).toMatchObject({
      values: ['2024', '12', '31', '07'],
      location: 's3://lake/hive/year=2024/month=12/day=31/hour=07/',
    });
  });

  it('refuses a date that is not a calendar day in YYYY-MM-DD form', async () => {
    for (const date of ['2023-02-29', '2024-1-05', '20240105', 'today']) {
      const res = await add(`database=lake&table=events&date=${date}`);
      expect(res.statusCode).toBe(422);
      expect(res.json().detail).toEqual([{ type: 'value_error', loc: ['query', 'date'], msg: DATE_FORMAT_MESSAGE }]);
    }
    expect((await add('database=lake&table=events')).json().detail[0]).toMatchObject({ loc: ['query', 'date'], type: 'missing' });
  });

  it('answers 404 for tables that are not configured or do not exist, 409 for tables without hourly keys', async () => {
    const unknown = await add('database=lake&table=other&date=2024-01-01');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ detail: UNKNOWN_TABLE });
    const missing = await add('database=lake&table=missing&date=2024-01-01');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: TABLE_NOT_FOUND });
    const flat = await add('database=lake&table=flat&date=2024-01-01');
    expect(flat.statusCode).toBe(409);
    expect(flat.json()).toEqual({ detail: NOT_HOURLY });
  });

  it('answers 500 with a request id when Glue cannot read the table or refuses a partition', async () => {
    for (const table of ['refusing', 'unreadable']) {
      const res = await call('POST', `/api/v1/etl/partitions/add?database=lake&table=${table}&date=2024-01-01`, developer);
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ detail: 'Internal Server Error', request_id: res.headers['x-request-id'] });
    }
  });

  it('refuses VIEWER and missing tokens', async () => {
    expect((await add('database=lake&table=events&date=2024-01-01', viewer)).statusCode).toBe(403);
    expect((await call('POST', '/api/v1/etl/partitions/add?database=lake&table=events&date=2024-01-01')).statusCode).toBe(401);
  });
});

describe('configuration', () => {
  it('accepts no name at all when none is configured, and has no query route', async () => {
    const job = await call('POST', '/api/v1/etl/jobs/run', developer, { job_type: 'daily_rollup' }, unconfigured.app);
    expect(job.json()).toEqual({ detail: UNKNOWN_JOB });
    const crawler = await call('POST', '/api/v1/etl/crawler/run', developer, { crawler_name: 'events-crawler' }, unconfigured.app);
    expect(crawler.json()).toEqual({ detail: UNKNOWN_CRAWLER });
    const table = await call('POST', '/api/v1/etl/partitions/add?database=lake&table=events&date=2024-01-01', developer, undefined, unconfigured.app);
    expect(table.json()).toEqual({ detail: UNKNOWN_TABLE });
    expect((await call('POST', '/api/v1/etl/query', developer, { sql: 'select 1' })).statusCode).toBe(404);
  });
});
