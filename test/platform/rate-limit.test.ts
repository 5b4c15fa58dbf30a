import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpliftApp } from '../../src/app.js';
import { TEST_PASSWORD, testApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
let limited: UpliftApp;
beforeAll(async () => {
  t = await testApp();
  limited = await t.spawn({ RATE_LIMIT_ENABLED: 'true', SDK_RATE_LIMIT_PER_MINUTE: '3' });
});
afterAll(() => t.close());

describe('rate limits key on the matched route, not the raw text', () => {
  it('counts a percent-encoded sign-in path in the sign-in bucket', async () => {
    const u = await t.user();
    const codes: number[] = [];
    for (const url of ['/api/v1/auth/login', '/api/v1/auth/%6Cogin', '/api/v1/auth/%6c%6F%67%69%6E']) {
      for (let i = 0; i < 4; i++) {
        const res = await limited.app.inject({ method: 'POST', url, payload: { email: u.email, password: TEST_PASSWORD }, remoteAddress: '10.7.0.1' });
        codes.push(res.statusCode);
      }
    }
    expect(codes.slice(0, 10)).not.toContain(429);
    expect(codes.slice(10)).toEqual([429, 429]);
  });

  it('counts an encoded id under its decoded value', async () => {
    const hit = (url: string) => limited.app.inject({ method: 'GET', url, remoteAddress: '10.7.0.2' });
    for (const url of ['/api/v1/feature-flags/user/ab', '/api/v1/feature-flags/user/%61b', '/api/v1/feature-flags/user/a%62']) {
      expect((await hit(url)).statusCode).not.toBe(429);
    }
    const over = await hit('/api/v1/feature-flags/user/%61%62');
    expect(over.statusCode).toBe(429);
    expect((await hit('/api/v1/feature-flags/user/abc')).statusCode).not.toBe(429);
  });
});
