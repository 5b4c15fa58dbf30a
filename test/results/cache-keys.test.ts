import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { experiment } from '../helpers/fixtures.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
beforeAll(async () => {
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
});
afterAll(() => t.close());

describe('results cache keys are normalised', () => {
  it('a free confidence_level is rounded to 0.001 for the answer and its cache entry alike', async () => {
    const e = await experiment(t, dev);
    const get = (q: string) => t.inject({ method: 'GET', url: `/api/v1/results/${e.id}?${q}`, headers: dev.headers });
    const exact = await get('confidence_level=0.95');
    const noisy = await get('confidence_level=0.9500004');
    expect(exact.statusCode).toBe(200);
    expect(noisy.statusCode).toBe(200);
    expect(noisy.json().confidence_level).toBe(0.95);
    expect(noisy.json().computed_at ?? null).toEqual(exact.json().computed_at ?? null);
  });
});
