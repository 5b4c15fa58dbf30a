import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { testApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
let key: Record<string, string>;
const ORIGIN = 'https://shop.example.com';
const USER_ROUTE = '/api/v1/feature-flags/user/u1';

beforeAll(async () => {
  t = await testApp({ env: { CORS_ORIGINS: `${ORIGIN}, http://localhost:5173` } });
  key = (await t.apiKey(await t.user({ role: 'DEVELOPER' }))).headers;
});
afterAll(() => t.close());

const preflight = (url: string, origin: string, app = t.app) =>
  app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, content-type' } });

describe('CORS on the client-facing routes (CORS_ORIGINS)', () => {
  it('answers a preflight for a listed origin, never allowing credentials', async () => {
    const res = await preflight('/api/v1/feature-flags/evaluate/some-flag', ORIGIN);
    expect(res.statusCode).toBe(204);
    expect(res.headers).toMatchObject({
      'access-control-allow-origin': ORIGIN,
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-allow-headers': 'X-API-Key, Content-Type, If-None-Match, Last-Event-ID, X-Request-ID',
      'access-control-max-age': '600',
      vary: 'Origin',
    });
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    for (const url of ['/api/v1/tracking/batch', '/api/v1/sdk/ruleset/stream', USER_ROUTE]) expect((await preflight(url, ORIGIN)).statusCode).toBe(204);
  });

  it('lets a listed origin read answers and refusals, and names the headers it may read', async () => {
    const ok = await t.inject({ method: 'GET', url: USER_ROUTE, headers: { ...key, origin: 'http://localhost:5173' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers).toMatchObject({ 'access-control-allow-origin': 'http://localhost:5173', 'access-control-expose-headers': 'ETag, Retry-After, X-Request-ID', vary: 'Origin' });
    const refused = await t.inject({ method: 'GET', url: USER_ROUTE, headers: { origin: ORIGIN } });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe(ORIGIN);
  });

  it('gives an origin that is not listed no CORS headers', async () => {
    const res = await t.inject({ method: 'GET', url: USER_ROUTE, headers: { ...key, origin: 'https://evil.example' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const pre = await preflight(USER_ROUTE, 'https://evil.example');
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('leaves every other route same-origin: no headers, preflight 404', async () => {
    const dev = await t.user({ role: 'DEVELOPER' });
    const res = await t.inject({ method: 'GET', url: '/api/v1/feature-flags', headers: { ...dev.headers, origin: ORIGIN } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect((await preflight('/api/v1/feature-flags', ORIGIN)).statusCode).toBe(404);
    expect((await preflight('/api/v1/auth/login', ORIGIN)).json()).toEqual({ detail: 'Not Found' });
  });

  it('allows any origin with *, still without credentials', async () => {
    const any = await t.spawn({ CORS_ORIGINS: '*' });
    const res = await any.app.inject({ method: 'POST', url: '/api/v1/tracking/track', headers: { ...key, origin: 'https://a.example' }, payload: { event_type: 'view', user_id: 'u1' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers.vary).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect((await preflight('/api/v1/tracking/track', 'https://b.example', any.app)).headers['access-control-allow-origin']).toBe('*');
  });

  it('is off by default: preflights are 404', async () => {
    const plain = await t.spawn({ CORS_ORIGINS: '' });
    expect((await preflight(USER_ROUTE, ORIGIN, plain.app)).statusCode).toBe(404);
  });

  it('refuses a CORS_ORIGINS value that is not a list of origins, naming the setting', () => {
    for (const bad of ['ftp://x.example', 'https://x.example/path', 'x.example', 'https://x.example?q=1']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow('CORS_ORIGINS must list origins (scheme://host[:port]) or *');
    }
    expect(loadConfig({ CORS_ORIGINS: 'HTTPS://App.Example.com:443/, http://localhost:3000,*' }).corsOrigins).toEqual(['https://app.example.com', 'http://localhost:3000', '*']);
  });
});
