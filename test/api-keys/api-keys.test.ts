import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/client.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('API keys', () => {
  it('any role creates a key; the full value is returned once, with the fixed prefix and 256 bits of randomness', async () => {
    const viewer = await t.user();
    const res = await t.inject({ method: 'POST', url: '/api/v1/api-keys', headers: viewer.headers, payload: { name: 'web', scopes: ['sdk:ruleset'] } });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ name: 'web', scopes: ['sdk:ruleset'], user_id: viewer.id });
    expect(body.key).toMatch(/^uplk_[A-Za-z0-9_-]{43}$/);
    expect(body.key.startsWith(body.key_prefix)).toBe(true);
    const list = await t.inject({ method: 'GET', url: '/api/v1/api-keys', headers: viewer.headers });
    expect(list.json()).toEqual([expect.objectContaining({ id: body.id, name: 'web' })]);
    expect(list.body).not.toContain(body.key);
    const stored = await queryRows<{ key_hash: string }>(t.database.db, sql`SELECT key_hash FROM api_keys WHERE id = ${body.id}`);
    expect(stored[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(body.key);
  });

  it('keys never repeat', async () => {
    const u = await t.user();
    const keys = await Promise.all(Array.from({ length: 5 }, () => t.apiKey(u)));
    expect(new Set(keys.map((k) => k.key)).size).toBe(5);
  });

  it('defaults scopes to none and refuses unknown scopes and fields (422)', async () => {
    const u = await t.user();
    const plain = await t.inject({ method: 'POST', url: '/api/v1/api-keys', headers: u.headers, payload: { name: 'plain' } });
    expect(plain.json().scopes).toEqual([]);
    const bad = await t.inject({ method: 'POST', url: '/api/v1/api-keys', headers: u.headers, payload: { name: 'x', scopes: ['admin:all'] } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail).toEqual([{ type: 'enum', loc: ['body', 'scopes', 0], msg: "Input should be 'sdk:ruleset'", ctx: { expected: "'sdk:ruleset'" } }]);
    expect((await t.inject({ method: 'POST', url: '/api/v1/api-keys', headers: u.headers, payload: { name: '' } })).statusCode).toBe(422);
    expect((await t.inject({ method: 'POST', url: '/api/v1/api-keys', headers: u.headers, payload: { name: 'x', owner: 'y' } })).statusCode).toBe(422);
    expect((await t.inject({ method: 'POST', url: '/api/v1/api-keys', payload: { name: 'x' } })).statusCode).toBe(401);
  });

  it('lists everyone’s keys with all=true only for ADMIN (and superusers)', async () => {
    const dev = await t.user({ role: 'DEVELOPER' });
    const admin = await t.user({ role: 'ADMIN' });
    const su = await t.user({ superuser: true });
    const devKey = await t.apiKey(dev);
    expect((await t.inject({ method: 'GET', url: '/api/v1/api-keys?all=true', headers: dev.headers })).statusCode).toBe(403);
    for (const caller of [admin, su]) {
      const all = await t.inject({ method: 'GET', url: '/api/v1/api-keys?all=true', headers: caller.headers });
      expect(all.statusCode).toBe(200);
      expect(all.json().map((k: { id: string }) => k.id)).toContain(devKey.id);
    }
    expect((await t.inject({ method: 'GET', url: '/api/v1/api-keys?all=maybe', headers: admin.headers })).statusCode).toBe(422);
  });

  it('deletes own keys; others’ keys only as ADMIN; unknown 404; bad id 422', async () => {
    const dev = await t.user({ role: 'DEVELOPER' });
    const other = await t.user({ role: 'DEVELOPER' });
    const admin = await t.user({ role: 'ADMIN' });
    const own = await t.apiKey(dev);
    const foreign = await t.apiKey(other);
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/api-keys/${foreign.id}`, headers: dev.headers })).statusCode).toBe(403);
    expect(await t.services.apiKeys.resolve(foreign.key)).toBeDefined();
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/api-keys/${own.id}`, headers: dev.headers })).statusCode).toBe(204);
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/api-keys/${foreign.id}`, headers: admin.headers })).statusCode).toBe(204);
    const missing = await t.inject({ method: 'DELETE', url: `/api/v1/api-keys/${own.id}`, headers: dev.headers });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: 'API key not found' });
    expect((await t.inject({ method: 'DELETE', url: '/api/v1/api-keys/123', headers: dev.headers })).statusCode).toBe(422);
  });

  it('a deleted key, or a key of a deactivated owner, stops authenticating at once', async () => {
    const su = await t.user({ superuser: true });
    const u = await t.user({ role: 'DEVELOPER' });
    const key = await t.apiKey(u, ['sdk:ruleset']);
    expect(await t.services.apiKeys.resolve(key.key)).toMatchObject({ userId: u.id, scopes: ['sdk:ruleset'], ownerRole: 'DEVELOPER' });
    await t.inject({ method: 'PATCH', url: `/api/v1/admin/users/${u.id}`, headers: su.headers, payload: { role: 'ANALYST' } });
    expect((await t.services.apiKeys.resolve(key.key))?.ownerRole).toBe('ANALYST');
    await t.inject({ method: 'PATCH', url: `/api/v1/admin/users/${u.id}`, headers: su.headers, payload: { is_active: false } });
    expect(await t.services.apiKeys.resolve(key.key)).toBeUndefined();
    expect(await t.services.apiKeys.resolve('uplk_not-a-real-key')).toBeUndefined();
    expect(await t.services.apiKeys.resolve('wrongprefix')).toBeUndefined();
  });

  it('writes audit entries for key creation and deletion without the key value', async () => {
    const u = await t.user();
    const key = await t.apiKey(u);
    await t.inject({ method: 'DELETE', url: `/api/v1/api-keys/${key.id}`, headers: u.headers });
    const rows = await queryRows<{ action: string }>(t.database.db, sql`SELECT action, before, after FROM audit_logs WHERE entity_id = ${key.id} ORDER BY created_at`);
    expect(rows.map((r) => r.action)).toEqual(['api_key_create', 'api_key_delete']);
    expect(JSON.stringify(rows)).not.toContain(key.key);
  });
});
