import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await testApp({ env: { ETL_GLUE_JOBS: 'nightly=uplift-nightly' } });
  admin = await t.user({ role: 'ADMIN', superuser: true });
});
afterAll(() => t.close());

describe('ETL names are looked up among configured ones only', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('job name %s is 404, never an Object.prototype member', async (name) => {
    const status = await t.inject({ method: 'GET', url: `/api/v1/etl/jobs/jr_1/status?job_name=${name}`, headers: admin.headers });
    expect([status.statusCode, status.json().detail]).toEqual([404, expect.any(String)]);
    const run = await t.inject({ method: 'POST', url: '/api/v1/etl/jobs/run', headers: admin.headers, payload: { job_type: name } });
    expect(run.statusCode).toBe(404);
  });
});
