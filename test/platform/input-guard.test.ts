import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNPAIRED_SURROGATE_REFUSED } from '../../src/platform/input-guard.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let admin: TestUser;
let key: Record<string, string>;
beforeAll(async () => {
  t = await testApp();
  admin = await t.user({ superuser: true, role: 'ADMIN' });
  key = (await t.apiKey(admin)).headers;
});
afterAll(() => t.close());

const detail = (body: string) => JSON.parse(body).detail as Array<{ type: string; loc: unknown[]; msg: string }>;

describe('numbers outside a safe range are 422, never a database error', () => {
  it.each([
    ['/api/v1/feature-flags/?skip=Infinity', 'skip', 'finite_number'],
    ['/api/v1/feature-flags/?limit=-Infinity', 'limit', 'finite_number'],
    ['/api/v1/admin/users?skip=9223372036854775808', 'skip', 'int_parsing_size'],
    ['/api/v1/experiments/?skip=1e300', 'skip', 'int_parsing_size'],
  ])('GET %s', async (url, name, type) => {
    const res = await t.inject({ method: 'GET', url, headers: admin.headers });
    expect(res.statusCode).toBe(422);
    expect(detail(res.body)).toContainEqual(expect.objectContaining({ type, loc: ['query', name] }));
  });

  it('a JSON number too large to be finite is 422 at its field', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/tracking/track',
      headers: { ...key, 'content-type': 'application/json' },
      payload: '{"event_type":"e","user_id":"u","value":1e999}',
    });
    expect(res.statusCode).toBe(422);
    expect(detail(res.body)).toEqual([expect.objectContaining({ type: 'finite_number', loc: ['body', 'value'] })]);
  });
});

describe('NUL characters anywhere are 422', () => {
  it('in a path parameter', async () => {
    const res = await t.inject({ method: 'DELETE', url: '/api/v1/rbac/roles/a%00b', headers: admin.headers });
    expect(res.statusCode).toBe(422);
    expect(detail(res.body)).toEqual([{ type: 'value_error', loc: ['path', 'role_name'], msg: 'Value error, NUL characters are not allowed' }]);
  });

  it('in a body string, a nested value and a key, never repeating the text', async () => {
    const cases: Array<[unknown, unknown[]]> = [
      [{ event_type: 'a\u0000', user_id: 'u' }, ['body', 'event_type']],
      [{ event_type: 'e', user_id: 'u', properties: { nested: ['ok', 'x\u0000y'] } }, ['body', 'properties', 'nested', 1]],
      [{ event_type: 'e', user_id: 'u', properties: { 'k\u0000': 1 } }, ['body', 'properties']],
    ];
    for (const [payload, loc] of cases) {
      const res = await t.inject({ method: 'POST', url: '/api/v1/tracking/track', headers: key, payload: payload as object });
      expect(res.statusCode).toBe(422);
      expect(detail(res.body)).toEqual([expect.objectContaining({ type: 'value_error', loc })]);
      expect(res.body).not.toContain('\\u0000');
    }
  });

  it('so are unpaired surrogates, in a JSON object value or key and in plain text, never repeating the text', async () => {
    const experiment = (configuration: string) => `{"name":"S","key":"surrogate-${Math.random().toString(36).slice(2)}",`
      + `"variants":[{"name":"c","is_control":true,"traffic_allocation":100,"configuration":${configuration}}],`
      + '"metrics":[{"name":"m","event_name":"e","metric_type":"conversion","is_primary":true}]}';
    const cases: Array<[string, unknown[]]> = [
      [experiment('{"x":"\\ud800"}'), ['body', 'variants', 0, 'configuration', 'x']],
      [experiment('{"\\udc00":1}'), ['body', 'variants', 0, 'configuration']],
      [experiment('{"x":"a\\udfff\\ud800b"}'), ['body', 'variants', 0, 'configuration', 'x']],
    ];
    for (const [payload, loc] of cases) {
      const res = await t.inject({ method: 'POST', url: '/api/v1/experiments/', headers: { ...admin.headers, 'content-type': 'application/json' }, payload });
      expect(res.statusCode).toBe(422);
      expect(detail(res.body)).toEqual([{ type: 'value_error', loc, msg: UNPAIRED_SURROGATE_REFUSED }]);
      expect(res.body.toLowerCase()).not.toMatch(/\\ud[89a-f]/);
    }
    const name = await t.inject({
      method: 'POST', url: '/api/v1/api-keys', headers: { ...admin.headers, 'content-type': 'application/json' }, payload: '{"name":"k\\ud83d"}',
    });
    expect([name.statusCode, detail(name.body)[0].loc]).toEqual([422, ['body', 'name']]);
    // A pair is one character (an emoji here) and is stored as sent.
    const paired = await t.inject({ method: 'POST', url: '/api/v1/experiments/', headers: { ...admin.headers, 'content-type': 'application/json' }, payload: experiment('{"x":"\\ud83d\\ude00"}') });
    expect(paired.statusCode).toBe(201);
    expect(paired.json().variants[0].configuration).toEqual({ x: '😀' });
  });

  it('in a query value', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/feature-flags/?search=a%00', headers: admin.headers });
    expect(res.statusCode).toBe(422);
    expect(detail(res.body)[0].loc).toEqual(['query', 'search']);
  });
});
