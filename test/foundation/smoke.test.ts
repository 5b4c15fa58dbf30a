import { afterAll, beforeAll, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

it('answers health', async () => {
  const res = await t.inject({ method: 'GET', url: '/health' });
  expect(res.statusCode).toBe(200);
  expect(res.json().status).toBe('ok');
});

it('signs in', async () => {
  const u = await t.user({ role: 'ADMIN' });
  const res = await t.inject({ method: 'GET', url: '/api/v1/users/me', headers: u.headers });
  expect(res.statusCode).toBe(200);
  expect(res.json().role).toBe('ADMIN');
});
