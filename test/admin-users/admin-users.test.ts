import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const put = (user: TestUser, id: string, payload: Record<string, unknown>, admin = false) =>
  t.inject({ method: 'PUT', url: `/api/v1/${admin ? 'admin/' : ''}users/${id}`, headers: user.headers, payload });
const patch = (user: TestUser, id: string, payload: Record<string, unknown>) =>
  t.inject({ method: 'PATCH', url: `/api/v1/admin/users/${id}`, headers: user.headers, payload });

describe('admin users routes', () => {
  it('need is_superuser: an ADMIN without it gets 403 on every route', async () => {
    const admin = await t.user({ role: 'ADMIN' });
    const u = await t.user();
    const calls = [
      t.inject({ method: 'GET', url: '/api/v1/admin/users', headers: admin.headers }),
      patch(admin, u.id, { full_name: 'x' }),
      put(admin, u.id, { username: u.username, email: u.email }, true),
      t.inject({ method: 'DELETE', url: `/api/v1/admin/users/${u.id}`, headers: admin.headers }),
    ];
    for (const res of await Promise.all(calls)) expect(res.statusCode).toBe(403);
    expect((await t.inject({ method: 'GET', url: '/api/v1/admin/users' })).statusCode).toBe(401);
  });

  it('lists accounts newest first with search, skip and limit', async () => {
    const su = await t.user({ superuser: true });
    const tag = t.unique('findme');
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.inject({
        method: 'POST', url: '/api/v1/users/', headers: su.headers,
        payload: { username: `${tag}-${i}`, email: `${tag}-${i}@example.com`, password: 'Str0ng-pass' },
      });
      created.push(res.json().id);
    }
    const res = await t.inject({ method: 'GET', url: `/api/v1/admin/users?search=${tag.toUpperCase()}&limit=2`, headers: su.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ total: 3, skip: 0, limit: 2 });
    expect(res.json().items.map((u: { id: string }) => u.id)).toEqual([created[2], created[1]]);
    const page2 = await t.inject({ method: 'GET', url: `/api/v1/admin/users?search=${tag}&skip=2`, headers: su.headers });
    expect(page2.json().items.map((u: { id: string }) => u.id)).toEqual([created[0]]);
  });

  it('404 for unknown ids and 422 for bad bodies', async () => {
    const su = await t.user({ superuser: true });
    const missing = '00000000-0000-4000-8000-000000000001';
    expect((await patch(su, missing, { full_name: 'x' })).json()).toEqual({ detail: 'User not found' });
    expect((await patch(su, su.id, { role: 'OWNER' })).statusCode).toBe(422);
    expect((await patch(su, su.id, { unknown: 1 })).statusCode).toBe(422);
  });
});
