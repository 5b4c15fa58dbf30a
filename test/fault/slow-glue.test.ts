import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_ERROR } from '../../src/platform/errors.js';
import { glueEnv, startHttpServer } from '../helpers/fakes.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

/**
 * A Glue endpoint that accepts requests and never answers must cost a route no more than its attempts (3) times the
 * configured request timeout: the route answers its documented failure of the cloud call (500 with a request id, no
 * detail of the cause, not the 503 of an unreachable database its network error codes used to be taken for) and the
 * process keeps serving. The case's time limit is far below the default timeout (30 s); before the request timeout
 * was made to throw, the call waited forever.
 */

let glue: Awaited<ReturnType<typeof startHttpServer>>;
let t: TestApp;
let developer: TestUser;
const ATTEMPTS = 3;

beforeAll(async () => {
  glue = await startHttpServer(() => 'hang');
  t = await testApp({
    env: glueEnv(glue.url, {
      ETL_GLUE_CRAWLERS: 'events-crawler',
      ETL_GLUE_TABLES: 'lake.events',
      ETL_GLUE_CONNECTION_TIMEOUT_SECONDS: '1',
      ETL_GLUE_REQUEST_TIMEOUT_SECONDS: '1',
    }),
  });
  developer = await t.user({ role: 'DEVELOPER' });
});
afterAll(async () => {
  await t.close();
  await glue.close();
});

describe('a Glue endpoint that never answers', () => {
  it.each([
    ['POST', '/api/v1/etl/jobs/run', { job_type: 'daily_rollup' }, 'StartJobRun'],
    ['GET', '/api/v1/etl/crawler/status?crawler_name=events-crawler', undefined, 'GetCrawler'],
    ['POST', '/api/v1/etl/partitions/add?database=lake&table=events&date=2031-03-01', undefined, 'GetTable'],
  ] as const)('%s %s fails within attempts times the request timeout, with a request id', async (method, url, payload, operation) => {
    const before = glue.requests.length;
    const res = await t.inject({ method, url, headers: developer.headers, ...(payload ? { payload } : {}) });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ detail: INTERNAL_ERROR, request_id: expect.any(String) });
    expect(res.headers['retry-after']).toBeUndefined();
    expect(res.body).not.toMatch(/timeout|ETIMEDOUT|127\.0\.0\.1/i);
    const sent = glue.requests.slice(before).map((r) => String(r.headers['x-amz-target']));
    expect(sent).toEqual(Array(ATTEMPTS).fill(`AWSGlue.${operation}`));
    expect((await t.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  }, 10_000);
});
