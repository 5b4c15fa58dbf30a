import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
beforeAll(async () => {
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
});
afterAll(() => t.close());

const createFlag = (payload: unknown) =>
  t.inject({ method: 'POST', url: '/api/v1/feature-flags/', headers: { ...dev.headers, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });

describe('422 amplification', () => {
  it('lists at most 50 errors for a body with thousands of unknown keys', async () => {
    const body: Record<string, unknown> = { key: 'k', name: 'n' };
    for (let i = 0; i < 20_000; i++) body[`extra${i}`] = i;
    const res = await createFlag(body);
    expect(res.statusCode).toBe(422);
    const detail = res.json().detail as Array<{ type: string; loc: unknown[] }>;
    expect(detail.length).toBeGreaterThan(0);
    expect(detail.length).toBeLessThanOrEqual(50);
    expect(detail[0].type).toBe('extra_forbidden');
    expect(res.body.length).toBeLessThan(20_000);
  });

  it('lists at most 50 errors for a small body with many, and every error of a body with few', async () => {
    const body: Record<string, unknown> = { key: 'k', name: 'n' };
    for (let i = 0; i < 80; i++) body[`extra${i}`] = i;
    const many = await createFlag(body);
    expect(many.statusCode).toBe(422);
    expect(many.json().detail).toHaveLength(50);

    const few = await createFlag({ key: 'k', name: 'n', a: 1, b: 2, c: 3 });
    expect(few.statusCode).toBe(422);
    expect(few.json().detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([['body', 'a'], ['body', 'b'], ['body', 'c']]);
  });
});
