import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

type Json = Record<string, any>;
type Headers = Record<string, string>;
const MINUTE = 60_000;
const clock = fixedClock(new Date('2031-08-01T10:00:00.000Z'));

let t: TestApp;
let dev: TestUser;
let viewer: TestUser;
/** Keys by trust: an sdk:ruleset key of a DEVELOPER (counted) and a plain key. */
let trusted: Headers;
let plain: Headers;

beforeAll(async () => {
  // The clock moves hours during the file: tokens must outlive it.
  t = await testApp({ clock, env: { ACCESS_TOKEN_EXPIRE_MINUTES: '525600' } });
  [dev, viewer] = await Promise.all([t.user({ role: 'DEVELOPER' }), t.user({ role: 'VIEWER' })]);
  [trusted, plain] = (await Promise.all([t.apiKey(dev, ['sdk:ruleset']), t.apiKey(dev)])).map((k) => k.headers);
});
afterAll(() => t.close());

function call(method: 'GET' | 'POST', url: string, headers: Headers | null, payload?: unknown) {
  // A millisecond per call keeps audit entries in the order they were made.
  clock.advance(1);
  return t.inject({ method, url, ...(headers ? { headers } : {}), ...(payload === undefined ? {} : { payload: payload as Json }) });
}

async function createFlag(body: Json = {}): Promise<Json> {
  const res = await call('POST', '/api/v1/feature-flags/', dev.headers, { key: t.unique('flag'), name: 'Flag', is_active: true, rollout_percentage: 50, ...body });
  if (res.statusCode !== 201) throw new Error(`create flag: ${res.statusCode} ${res.body}`);
  return res.json();
}

async function reportErrors(headers: Headers, flagKey: string, count: number): Promise<void> {
  const reports = Array.from({ length: count }, (_, i) => ({ error_type: 'TypeError', message: `boom ${i}`, feature_flag_key: flagKey }));
  const res = await call('POST', '/api/v1/tracking/errors/batch', headers, { reports });
  expect(res.json()).toMatchObject({ stored: count, failed: 0 });
}

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
