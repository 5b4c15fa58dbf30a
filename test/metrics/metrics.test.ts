import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorsClock, flagErrorsApp, MINUTE, type FlagErrorsApp, type Headers } from '../helpers/flag-errors.js';
import type { TestApp, TestUser } from '../helpers/test-app.js';

const clock = errorsClock();

let t: TestApp;
let viewer: TestUser;
let trusted: Headers;
let plain: Headers;
let call: FlagErrorsApp['call'];
let createFlag: FlagErrorsApp['createFlag'];
let reportErrors: FlagErrorsApp['reportErrors'];

beforeAll(async () => {
  ({ t, viewer, trusted, plain, call, createFlag, reportErrors } = await flagErrorsApp(clock));
});
afterAll(() => t.close());

describe('metrics summary', () => {
  it('reports counted error_rate and uncounted_error_count over the window, with the flags', async () => {
    // A day later: the one-minute window holds only this test's reports.
    clock.advance(24 * 60 * MINUTE);
    const flag = await createFlag();
    await reportErrors(trusted, flag.key, 6);
    await reportErrors(plain, flag.key, 4);
    await call('POST', '/api/v1/tracking/errors', trusted, { error_type: 'E' });
    const res = await call('GET', '/api/v1/metrics/summary?window_minutes=2', viewer.headers);
    expect(res.statusCode).toBe(200);
    const now = clock.now();
    expect(res.json()).toEqual({
      window_minutes: 2, window_start: new Date(now.getTime() - 2 * MINUTE).toISOString(), generated_at: now.toISOString(),
      error_count: 7, error_rate: 3.5, uncounted_error_count: 4,
      flags: [{ flag_id: flag.id, flag_key: flag.key, error_count: 6, error_rate: 3, uncounted_error_count: 4 }],
    });
    expect((await call('GET', '/api/v1/metrics/summary', viewer.headers)).json()).toMatchObject({ window_minutes: 5, error_count: 7 });
    expect((await call('GET', '/api/v1/metrics/summary?window_minutes=0', viewer.headers)).json().detail[0]).toMatchObject({ loc: ['query', 'window_minutes'] });
    expect((await call('GET', '/api/v1/metrics/summary', null)).statusCode).toBe(401);
  });
});
