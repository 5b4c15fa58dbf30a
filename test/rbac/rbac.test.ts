import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogs } from '../../src/db/schema/audit-logs.js';
import {
  GRANT_USER_MISMATCH,
  ROLE_NAME_TAKEN,
  ROLE_NOT_ASSIGNED,
  ROLE_NOT_FOUND,
  SYSTEM_ROLE_NOT_DELETABLE,
  SYSTEM_ROLE_NOT_MODIFIABLE,
} from '../../src/modules/rbac/service.js';
import { USER_NOT_FOUND } from '../../src/modules/users/service.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await testApp();
  admin = await t.user({ role: 'ADMIN' });
});
afterAll(() => t.close());

const R = '/api/v1/rbac';
const roleName = () => t.unique('role').toLowerCase();

async function createRole(name: string, permissions: unknown[] = [{ resource: 'experiment', actions: ['read'] }]) {
  const res = await t.inject({ method: 'POST', url: `${R}/roles`, headers: admin.headers, payload: { name, permissions } });
  expect(res.statusCode).toBe(201);
  return res.json();
}

/** Nothing in the API creates a system role in this release, so the state is made directly. */
async function systemRole(name: string) {
  await t.database.exec(
    `INSERT INTO custom_roles (id, name, is_system_role, permissions) VALUES (gen_random_uuid(), '${name}', true, '[{"resource":"report","actions":["read"]}]')`,
  );
}

function auditFor(entityId: string, action: string) {
  return t.database.db.select().from(auditLogs).where(and(eq(auditLogs.entityId, entityId), eq(auditLogs.action, action)));
}

describe('roles', () => {
  it('creates, reads, lists and updates a role; permissions merged and sorted; audited', async () => {
    const name = roleName();
    const created = await createRole(name, [
      { resource: 'report', actions: ['read', 'list'] },
      { resource: 'experiment', actions: ['update'] },
      { resource: 'report', actions: ['create', 'read'] },
    ]);
    expect(created).toEqual({
      id: expect.any(String),
      name,
      description: null,
      is_system_role: false,
      permissions: [
        { resource: 'experiment', actions: ['update'] },
        { resource: 'report', actions: ['create', 'list', 'read'] },
      ],
      created_at: expect.any(String),
      user_count: 0,
    });
    const viewer = await t.user();
    const got = await t.inject({ method: 'GET', url: `${R}/roles/${name}`, headers: viewer.headers });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(created);
    const list = await t.inject({ method: 'GET', url: `${R}/roles`, headers: viewer.headers });
    expect(list.json().find((r: { name: string }) => r.name === name)).toEqual(created);

    const put = await t.inject({
      method: 'PUT', url: `${R}/roles/${name}`, headers: admin.headers,
      payload: { description: 'Release managers', permissions: [{ resource: 'feature_flag', actions: ['update'] }] },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ description: 'Release managers', permissions: [{ resource: 'feature_flag', actions: ['update'] }] });
    const [entry] = await auditFor(created.id, 'custom_role_update');
    expect(entry.actorId).toBe(admin.id);
    expect(entry.before).toMatchObject({ permissions: created.permissions });
    expect(await auditFor(created.id, 'custom_role_create')).toHaveLength(1);
  });

  it('include_system=false leaves out system roles', async () => {
    const name = roleName();
    await systemRole(name);
    const all = await t.inject({ method: 'GET', url: `${R}/roles`, headers: admin.headers });
    expect(all.json().find((r: { name: string }) => r.name === name)).toMatchObject({ is_system_role: true });
    const custom = await t.inject({ method: 'GET', url: `${R}/roles?include_system=false`, headers: admin.headers });
    expect(custom.json().some((r: { name: string }) => r.name === name)).toBe(false);
  });

  it('refuses to modify or delete a system role (400) and leaves it unchanged', async () => {
    const name = roleName();
    await systemRole(name);
    const put = await t.inject({ method: 'PUT', url: `${R}/roles/${name}`, headers: admin.headers, payload: { description: 'x' } });
    expect(put.statusCode).toBe(400);
    expect(put.json()).toEqual({ detail: SYSTEM_ROLE_NOT_MODIFIABLE });
    const del = await t.inject({ method: 'DELETE', url: `${R}/roles/${name}`, headers: admin.headers });
    expect(del.statusCode).toBe(400);
    expect(del.json()).toEqual({ detail: SYSTEM_ROLE_NOT_DELETABLE });
    const got = await t.inject({ method: 'GET', url: `${R}/roles/${name}`, headers: admin.headers });
    expect(got.json()).toMatchObject({ description: null, permissions: [{ resource: 'report', actions: ['read'] }] });
  });

  it('409 on a duplicate name, nothing changed', async () => {
    const name = roleName();
    const first = await createRole(name);
    const res = await t.inject({ method: 'POST', url: `${R}/roles`, headers: admin.headers, payload: { name, permissions: [] } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: ROLE_NAME_TAKEN });
    expect((await t.inject({ method: 'GET', url: `${R}/roles/${name}`, headers: admin.headers })).json()).toEqual(first);
  });

  it.each([
    ['a', 'string_too_short'],
    ['x'.repeat(65), 'string_too_long'],
    ['Upper', 'string_pattern_mismatch'],
    ['1abc', 'string_pattern_mismatch'],
    ['has space', 'string_pattern_mismatch'],
    ['dot.name', 'string_pattern_mismatch'],
  ])('422 for the name %s', async (name, type) => {
    const res = await t.inject({ method: 'POST', url: `${R}/roles`, headers: admin.headers, payload: { name, permissions: [] } });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0]).toMatchObject({ type, loc: ['body', 'name'] });
    expect((await t.inject({ method: 'GET', url: `${R}/roles/${encodeURIComponent(name)}`, headers: admin.headers })).statusCode).toBe(404);
  });

  it('accepts names of 2 and 64 characters with - and _', async () => {
    await createRole(`q${t.unique().slice(-1)}`.toLowerCase().replace(/[^a-z0-9]/g, 'z'));
    await createRole(`r-_${t.unique().toLowerCase()}`.padEnd(64, 'z'));
  });

  it('422 for empty actions, an unknown resource or action, an unknown field', async () => {
    for (const [permissions, loc] of [
      [[{ resource: 'experiment', actions: [] }], ['body', 'permissions', 0, 'actions']],
      [[{ resource: 'warehouse', actions: ['read'] }], ['body', 'permissions', 0, 'resource']],
      [[{ resource: 'experiment', actions: ['approve'] }], ['body', 'permissions', 0, 'actions', 0]],
    ] as const) {
      const res = await t.inject({ method: 'POST', url: `${R}/roles`, headers: admin.headers, payload: { name: roleName(), permissions } });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0].loc).toEqual(loc);
    }
    const extra = await t.inject({ method: 'POST', url: `${R}/roles`, headers: admin.headers, payload: { name: roleName(), permissions: [], deny: true } });
    expect(extra.json().detail[0]).toMatchObject({ type: 'extra_forbidden', loc: ['body', 'deny'] });
  });

  it('401 without a token, 403 below ADMIN on every change; a superuser counts as ADMIN', async () => {
    expect((await t.inject({ method: 'GET', url: `${R}/roles` })).statusCode).toBe(401);
    const dev = await t.user({ role: 'DEVELOPER' });
    const name = roleName();
    await createRole(name);
    const other = await t.user();
    for (const [method, url, payload] of [
      ['POST', `${R}/roles`, { name: roleName(), permissions: [] }],
      ['PUT', `${R}/roles/${name}`, { description: 'x' }],
      ['DELETE', `${R}/roles/${name}`, undefined],
      ['POST', `${R}/roles/assign`, { user_id: other.id, role_name: name }],
      ['POST', `${R}/roles/revoke`, { user_id: other.id, role_name: name }],
      ['POST', `${R}/users/${other.id}/grant`, { resource: 'report', actions: ['read'] }],
      ['DELETE', `${R}/users/${other.id}/grant/report`, undefined],
    ] as const) {
      const res = await t.inject({ method, url, headers: dev.headers, payload });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
    }
    expect((await t.inject({ method: 'GET', url: `${R}/roles/${name}`, headers: admin.headers })).json()).toMatchObject({ description: null, user_count: 0 });
    const root = await t.user({ superuser: true });
    const res = await t.inject({ method: 'POST', url: `${R}/roles`, headers: root.headers, payload: { name: roleName(), permissions: [] } });
    expect(res.statusCode).toBe(201);
  });

  it('404 for an unknown role on get, update, delete, assign', async () => {
    const user = await t.user();
    const name = roleName();
    for (const [method, url, payload] of [
      ['GET', `${R}/roles/${name}`, undefined],
      ['PUT', `${R}/roles/${name}`, { description: 'x' }],
      ['DELETE', `${R}/roles/${name}`, undefined],
      ['POST', `${R}/roles/assign`, { user_id: user.id, role_name: name }],
    ] as const) {
      const res = await t.inject({ method, url, headers: admin.headers, payload });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: ROLE_NOT_FOUND });
    }
  });

  it('deleting a role removes its assignments and is audited', async () => {
    const name = roleName();
    const role = await createRole(name, [{ resource: 'audit_log', actions: ['read'] }]);
    const user = await t.user();
    await t.inject({ method: 'POST', url: `${R}/roles/assign`, headers: admin.headers, payload: { user_id: user.id, role_name: name } });
    const del = await t.inject({ method: 'DELETE', url: `${R}/roles/${name}`, headers: admin.headers });
    expect(del.statusCode).toBe(204);
    expect((await t.inject({ method: 'GET', url: `${R}/roles/${name}`, headers: admin.headers })).statusCode).toBe(404);
    const perms = await t.inject({ method: 'GET', url: `${R}/users/${user.id}/permissions`, headers: admin.headers });
    expect(perms.json().custom_roles).toEqual([]);
    expect(perms.json().permissions.audit_log).toBeUndefined();
    const [entry] = await auditFor(role.id, 'custom_role_delete');
    expect(entry.before).toMatchObject({ name, user_count: 1 });
  });
});

describe('assignments', () => {
  it('assign is idempotent; revoke takes it away; revoking again is 404', async () => {
    const name = roleName();
    const role = await createRole(name);
    const user = await t.user();
    const body = { user_id: user.id, role_name: name, reason: 'on call' };
    for (let i = 0; i < 2; i++) {
      const res = await t.inject({ method: 'POST', url: `${R}/roles/assign`, headers: admin.headers, payload: body });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'assigned', user_id: user.id, role: name });
    }
    expect((await t.inject({ method: 'GET', url: `${R}/roles/${name}`, headers: admin.headers })).json().user_count).toBe(1);
    expect(await auditFor(user.id, 'custom_role_assign')).toHaveLength(1);

    const revoke = await t.inject({ method: 'POST', url: `${R}/roles/revoke`, headers: admin.headers, payload: body });
    expect(revoke.statusCode).toBe(200);
    expect(revoke.json()).toEqual({ status: 'revoked', user_id: user.id, role: name });
    expect((await t.inject({ method: 'GET', url: `${R}/roles/${name}`, headers: admin.headers })).json().user_count).toBe(0);
    const again = await t.inject({ method: 'POST', url: `${R}/roles/revoke`, headers: admin.headers, payload: body });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ detail: ROLE_NOT_ASSIGNED });
    expect(await auditFor(user.id, 'custom_role_revoke')).toHaveLength(1);
    expect(role.user_count).toBe(0);
  });

  it('concurrent assigns of the same role leave one assignment', async () => {
    const name = roleName();
    await createRole(name);
    const user = await t.user();
    const results = await Promise.all(
      [1, 2, 3].map(() => t.inject({ method: 'POST', url: `${R}/roles/assign`, headers: admin.headers, payload: { user_id: user.id, role_name: name } })),
    );
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect((await t.inject({ method: 'GET', url: `${R}/roles/${name}`, headers: admin.headers })).json().user_count).toBe(1);
  });

  it('404 for an unknown user; 422 for a non-UUID user_id', async () => {
    const name = roleName();
    await createRole(name);
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const url of [`${R}/roles/assign`, `${R}/roles/revoke`]) {
      const res = await t.inject({ method: 'POST', url, headers: admin.headers, payload: { user_id: unknown, role_name: name } });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: USER_NOT_FOUND });
    }
    const bad = await t.inject({ method: 'POST', url: `${R}/roles/assign`, headers: admin.headers, payload: { user_id: 'x', role_name: name } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['body', 'user_id'] });
  });
});

describe('effective permissions and direct grants', () => {
  it('unites base role, custom roles and valid grants, sorted; expired and inactive grants excluded', async () => {
    const name = roleName();
    await createRole(name, [{ resource: 'user', actions: ['list'] }, { resource: 'experiment', actions: ['update'] }]);
    const user = await t.user({ role: 'ANALYST' });
    await t.inject({ method: 'POST', url: `${R}/roles/assign`, headers: admin.headers, payload: { user_id: user.id, role_name: name } });
    const grant = (payload: object) => t.inject({ method: 'POST', url: `${R}/users/${user.id}/grant`, headers: admin.headers, payload });
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const res = await grant({ user_id: user.id, resource: 'role', actions: ['read', 'create', 'read'], expires_at: future, reason: 'audit week' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ status: 'granted', user_id: user.id, resource: 'role', actions: ['create', 'read'] });
    expect((await grant({ resource: 'permission', actions: ['delete'], expires_at: '2001-01-01T00:00:00Z' })).statusCode).toBe(201);
    expect((await grant({ resource: 'export', actions: ['delete'] })).statusCode).toBe(201);
    // Nothing in the API deactivates a grant; the stored flag is set directly to check it is honoured.
    await t.database.exec(`UPDATE direct_permission_grants SET is_active = false WHERE user_id = '${user.id}' AND resource = 'export'`);

    const perms = await t.inject({ method: 'GET', url: `${R}/users/${user.id}/permissions`, headers: user.headers });
    expect(perms.statusCode).toBe(200);
    const body = perms.json();
    expect(body).toEqual({
      user_id: user.id,
      username: user.username,
      base_role: 'analyst',
      custom_roles: [name],
      permissions: {
        audit_log: ['list', 'read'],
        experiment: ['list', 'read', 'update'],
        export: ['read'],
        feature_flag: ['list', 'read'],
        report: ['create', 'list', 'read'],
        role: ['create', 'read'],
        user: ['list'],
      },
      is_superuser: false,
    });
    expect(Object.keys(body.permissions)).toEqual(Object.keys(body.permissions).sort());
    const [entry] = await auditFor(user.id, 'permission_grant');
    expect(entry.after).toMatchObject({ resource: 'role', actions: ['create', 'read'], expires_at: future });
  });

  it('self or ADMIN: another user is 403 (even when unknown), ADMIN sees anyone, unknown user 404', async () => {
    const a = await t.user({ role: 'DEVELOPER' });
    const b = await t.user();
    expect((await t.inject({ method: 'GET', url: `${R}/users/${b.id}/permissions`, headers: a.headers })).statusCode).toBe(403);
    const unknown = '00000000-0000-4000-8000-000000000001';
    expect((await t.inject({ method: 'GET', url: `${R}/users/${unknown}/permissions`, headers: a.headers })).statusCode).toBe(403);
    const res = await t.inject({ method: 'GET', url: `${R}/users/${unknown}/permissions`, headers: admin.headers });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: USER_NOT_FOUND });
    const root = await t.user({ superuser: true });
    const ok = await t.inject({ method: 'GET', url: `${R}/users/${b.id}/permissions`, headers: root.headers });
    expect(ok.json()).toMatchObject({ base_role: 'viewer', is_superuser: false });
    const own = await t.inject({ method: 'GET', url: `${R}/users/${root.id}/permissions`, headers: root.headers });
    expect(own.json().is_superuser).toBe(true);
    expect((await t.inject({ method: 'GET', url: `${R}/users/nope/permissions`, headers: admin.headers })).statusCode).toBe(422);
    expect((await t.inject({ method: 'GET', url: `${R}/users/${b.id}/permissions` })).statusCode).toBe(401);
  });

  it('grant refusals: body user differs 400, unknown user 404, empty actions 422; nothing stored', async () => {
    const user = await t.user();
    const other = await t.user();
    const url = `${R}/users/${user.id}/grant`;
    const mismatch = await t.inject({ method: 'POST', url, headers: admin.headers, payload: { user_id: other.id, resource: 'report', actions: ['read'] } });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json()).toEqual({ detail: GRANT_USER_MISMATCH });
    const empty = await t.inject({ method: 'POST', url, headers: admin.headers, payload: { resource: 'report', actions: [] } });
    expect(empty.json().detail[0]).toMatchObject({ type: 'too_short', loc: ['body', 'actions'] });
    const badDate = await t.inject({ method: 'POST', url, headers: admin.headers, payload: { resource: 'report', actions: ['read'], expires_at: 'soon' } });
    expect(badDate.json().detail[0].loc).toEqual(['body', 'expires_at']);
    const unknown = await t.inject({
      method: 'POST', url: `${R}/users/00000000-0000-4000-8000-000000000002/grant`, headers: admin.headers, payload: { resource: 'report', actions: ['read'] },
    });
    expect(unknown.statusCode).toBe(404);
    const perms = await t.inject({ method: 'GET', url: `${R}/users/${user.id}/permissions`, headers: admin.headers });
    expect(perms.json().permissions.report).toEqual(['list', 'read']);
    expect(await auditFor(user.id, 'permission_grant')).toHaveLength(0);
  });

  it('DELETE grant removes every grant of that user and resource and counts them', async () => {
    const user = await t.user();
    const url = `${R}/users/${user.id}/grant`;
    await t.inject({ method: 'POST', url, headers: admin.headers, payload: { resource: 'user', actions: ['read'] } });
    await t.inject({ method: 'POST', url, headers: admin.headers, payload: { resource: 'user', actions: ['update'], expires_at: '2001-01-01T00:00:00Z' } });
    await t.inject({ method: 'POST', url, headers: admin.headers, payload: { resource: 'role', actions: ['read'] } });
    const del = await t.inject({ method: 'DELETE', url: `${url}/user`, headers: admin.headers });
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({ status: 'revoked', count: 2 });
    expect((await t.inject({ method: 'DELETE', url: `${url}/user`, headers: admin.headers })).json()).toEqual({ status: 'revoked', count: 0 });
    const perms = await t.inject({ method: 'GET', url: `${R}/users/${user.id}/permissions`, headers: admin.headers });
    expect(perms.json().permissions).toMatchObject({ role: ['read'] });
    expect(perms.json().permissions.user).toBeUndefined();
    expect(await auditFor(user.id, 'permission_revoke')).toHaveLength(1);
    const unknown = await t.inject({ method: 'DELETE', url: `${R}/users/00000000-0000-4000-8000-000000000003/grant/user`, headers: admin.headers });
    expect(unknown.statusCode).toBe(404);
  });
});

describe('stored and displayed only', () => {
  it('a VIEWER granted user:create and given an all-powerful custom role still gets 403', async () => {
    const viewer = await t.user();
    const name = roleName();
    await createRole(name, ['experiment', 'feature_flag', 'user', 'role', 'permission', 'report', 'audit_log', 'export'].map((resource) => ({
      resource, actions: ['create', 'read', 'update', 'delete', 'list'],
    })));
    await t.inject({ method: 'POST', url: `${R}/roles/assign`, headers: admin.headers, payload: { user_id: viewer.id, role_name: name } });
    for (const resource of ['user', 'experiment', 'role']) {
      await t.inject({ method: 'POST', url: `${R}/users/${viewer.id}/grant`, headers: admin.headers, payload: { resource, actions: ['create'] } });
    }
    const perms = await t.inject({ method: 'GET', url: `${R}/users/${viewer.id}/permissions`, headers: viewer.headers });
    expect(perms.json().permissions.user).toContain('create');

    const createUser = await t.inject({
      method: 'POST', url: '/api/v1/users/', headers: viewer.headers,
      payload: { username: t.unique(), email: `${t.unique()}@example.com`, password: 'Passw0rd!x' },
    });
    expect(createUser.statusCode).toBe(403);
    const createExperiment = await t.inject({
      method: 'POST', url: '/api/v1/experiments/', headers: viewer.headers,
      payload: {
        name: 'Blocked', key: t.unique('exp'),
        variants: [{ name: 'control', is_control: true, traffic_allocation: 50 }, { name: 'b', traffic_allocation: 50 }],
        metrics: [{ name: 'Signup', event_name: 'signup', is_primary: true }],
      },
    });
    expect(createExperiment.statusCode).toBe(403);
    const createRoleRes = await t.inject({ method: 'POST', url: `${R}/roles`, headers: viewer.headers, payload: { name: roleName(), permissions: [] } });
    expect(createRoleRes.statusCode).toBe(403);
    const grant = await t.inject({ method: 'POST', url: `${R}/users/${viewer.id}/grant`, headers: viewer.headers, payload: { resource: 'user', actions: ['create'] } });
    expect(grant.statusCode).toBe(403);
  });
});

it('a core deployment does not serve /api/v1/rbac (404)', async () => {
  const core = await t.spawn({ DEPLOYMENT_PROFILE: 'core' });
  const res = await core.app.inject({ method: 'GET', url: `${R}/roles`, headers: admin.headers });
  expect(res.statusCode).toBe(404);
});
