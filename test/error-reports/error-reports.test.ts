import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNKNOWN_FLAG_KEY } from '../../src/modules/error-reports/service.js';
import { errorsClock, flagErrorsApp, type FlagErrorsApp, type Headers, type Json } from '../helpers/flag-errors.js';
import type { TestApp, TestUser } from '../helpers/test-app.js';

const clock = errorsClock();

let t: TestApp;
let viewer: TestUser;
let root: TestUser;
let trusted: Headers;
let plain: Headers;
let analystSdk: Headers;
let call: FlagErrorsApp['call'];
let createFlag: FlagErrorsApp['createFlag'];

beforeAll(async () => {
  ({ t, viewer, root, trusted, plain, analystSdk, call, createFlag } = await flagErrorsApp(clock));
});
afterAll(() => t.close());
const checkUrl = (flagId: string) => `/api/v1/safety/feature-flags/${flagId}/check`;
const check = async (flagId: string) => (await call('GET', checkUrl(flagId), viewer.headers)).json();

describe('error reports (tracking rule 7)', () => {
  it('counts reports of an sdk:ruleset key whose owner can change flags; stores others with source client', async () => {
    const flag = await createFlag();
    const superKey = (await t.apiKey(root, ['sdk:ruleset'])).headers;
    const body = { error_type: 'TypeError', message: 'x is undefined', feature_flag_key: flag.key, user_id: 'u1', request_data: { path: '/cart', source: 'sdk' } };
    const counted = await call('POST', '/api/v1/tracking/errors', trusted, body);
    expect(counted.statusCode).toBe(200);
    expect(counted.json()).toEqual({
      id: expect.any(String), error_type: 'TypeError', message: 'x is undefined', feature_flag_key: flag.key, feature_flag_id: flag.id,
      user_id: 'u1', request_data: { path: '/cart', source: 'sdk' }, source: 'sdk', counted: true, created_at: clock.now().toISOString(),
    });
    expect((await call('POST', '/api/v1/tracking/errors', superKey, body)).json()).toMatchObject({ counted: true, source: 'sdk' });
    for (const headers of [plain, analystSdk]) {
      const res = await call('POST', '/api/v1/tracking/errors', headers, body);
      // A client cannot claim to be trusted through request_data.source.
      expect(res.json()).toMatchObject({ counted: false, source: 'client', request_data: { path: '/cart', source: 'client' } });
    }
    expect(await check(flag.id)).toMatchObject({ error_count: 2, uncounted_error_count: 2 });
  });

  it('stores reports without a flag, refuses unknown flags with 404, and validates the body', async () => {
    const flag = await createFlag();
    const free = await call('POST', '/api/v1/tracking/errors', trusted, { error_type: 'NetworkError' });
    expect(free.json()).toMatchObject({ feature_flag_key: null, feature_flag_id: null, message: null, request_data: { source: 'sdk' } });
    const unknown = await call('POST', '/api/v1/tracking/errors', trusted, { error_type: 'E', feature_flag_key: t.unique('none') });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ detail: UNKNOWN_FLAG_KEY });
    expect((await call('POST', '/api/v1/tracking/errors', null, { error_type: 'E', feature_flag_key: flag.key })).statusCode).toBe(401);
    expect((await call('POST', '/api/v1/tracking/errors', { 'x-api-key': 'uplk_wrong' }, { error_type: 'E' })).statusCode).toBe(401);
    const cases: Array<[Json, Json]> = [
      [{ feature_flag_key: flag.key }, { type: 'missing', loc: ['body', 'error_type'] }],
      [{ error_type: '' }, { type: 'string_too_short', loc: ['body', 'error_type'] }],
      [{ error_type: 'E', request_data: 'x' }, { type: 'dict_type', loc: ['body', 'request_data'] }],
      [{ error_type: 'E', feature_flag_key: flag.key, stack: 'x' }, { type: 'extra_forbidden', loc: ['body', 'stack'] }],
    ];
    for (const [body, issue] of cases) {
      const res = await call('POST', '/api/v1/tracking/errors', trusted, body);
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0]).toMatchObject(issue);
    }
    expect(await check(flag.id)).toMatchObject({ error_count: 0, uncounted_error_count: 0 });
  });

  it('stores a batch, listing reports that name unknown flags', async () => {
    const flag = await createFlag();
    const res = await call('POST', '/api/v1/tracking/errors/batch', plain, {
      reports: [{ error_type: 'A', feature_flag_key: flag.key }, { error_type: 'B', feature_flag_key: t.unique('none') }, { error_type: 'C' }],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      received: 3, stored: 2, failed: 1, counted: false,
      results: [{ index: 0, success: true, id: expect.any(String) }, { index: 1, success: false, error: UNKNOWN_FLAG_KEY }, { index: 2, success: true, id: expect.any(String) }],
      errors: [{ index: 1, error: UNKNOWN_FLAG_KEY }],
    });
    expect(await check(flag.id)).toMatchObject({ error_count: 0, uncounted_error_count: 1 });
    expect((await call('POST', '/api/v1/tracking/errors/batch', trusted, { reports: [] })).json().detail[0]).toMatchObject({ type: 'too_short', loc: ['body', 'reports'] });
    const tooMany = Array.from({ length: 1001 }, () => ({ error_type: 'E', feature_flag_key: flag.key }));
    expect((await call('POST', '/api/v1/tracking/errors/batch', trusted, { reports: tooMany })).json().detail[0]).toMatchObject({ type: 'too_long' });
    expect((await call('POST', '/api/v1/tracking/errors/batch', null, { reports: [{ error_type: 'E' }] })).statusCode).toBe(401);
    expect(await check(flag.id)).toMatchObject({ error_count: 0, uncounted_error_count: 1 });
  });
});
