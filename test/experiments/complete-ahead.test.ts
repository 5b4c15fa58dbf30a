import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { experiment } from '../helpers/fixtures.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

const NOW = new Date('2031-03-01T12:00:00.000Z');
const HOUR = 3_600_000;
let t: TestApp;
let dev: TestUser;
beforeAll(async () => {
  t = await testApp({ clock: fixedClock(NOW) });
  dev = await t.user({ role: 'DEVELOPER' });
});
afterAll(() => t.close());

const call = (method: 'POST' | 'PUT', url: string, payload?: object) => t.inject({ method, url, headers: dev.headers, payload });

describe('transition table: any | complete | start_date is after now', () => {
  it('completes a draft scheduled for the future, start_date one microsecond before the new end_date', async () => {
    const e = await experiment(t, dev, { start: false });
    await call('PUT', `/api/v1/experiments/${e.id}/schedule`, { start_date: new Date(NOW.getTime() + HOUR).toISOString() });
    const res = await call('POST', `/api/v1/experiments/${e.id}/complete`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'completed', end_date: '2031-03-01T12:00:00.000000Z', start_date: '2031-03-01T11:59:59.999999Z' });
  });

  it('still refuses to complete a draft whose start is not ahead (409)', async () => {
    const e = await experiment(t, dev, { start: false });
    const res = await call('POST', `/api/v1/experiments/${e.id}/complete`);
    expect(res.statusCode).toBe(409);
    expect(res.json().detail).toBe('Cannot complete an experiment in draft status');
  });
});
