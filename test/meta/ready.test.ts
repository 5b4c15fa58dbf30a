import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('GET /ready', () => {
  it('is 200 when the database (and Redis when configured) answer, without credentials', async () => {
    const res = await t.inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: { database: 'ok', ...(process.env.TEST_REDIS_URL ? { redis: 'ok' } : {}) } });
  });

  it('is 503 naming the dependency that does not answer, while /health stays 200', async () => {
    const broken = await t.spawn();
    const original = t.database.session;
    t.database.session = () => Promise.reject(new Error('connection refused'));
    try {
      const res = await broken.app.inject({ method: 'GET', url: '/ready' });
      expect(res.statusCode).toBe(503);
      expect(res.json().checks.database).toBe('error');
      expect((await broken.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    } finally {
      t.database.session = original;
    }
  });
});
