import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { queryRows } from '../../src/db/client.js';
import { fixedClock } from '../../src/platform/clock.js';
import { rolesFromGroups } from '../../src/modules/auth/idp/roles.js';
import { acceptedIssuers } from '../../src/modules/auth/idp/verifier.js';
import type { UpliftApp } from '../../src/app.js';
import type { TestApp } from '../helpers/test-app.js';
import type { FakeIdp, FakeUser } from './fake-idp.js';
import { bearer, startIdpApp, stopIdpApp } from './helpers.js';

let idp: FakeIdp;
let t: TestApp;
// Audit entries are ordered by their time: the clock moves a second per request so the order is certain.
const clock = fixedClock(new Date('2026-03-01T00:00:00Z'));
beforeAll(async () => {
  ({ idp, t } = await startIdpApp({}, clock));
});
afterAll(() => stopIdpApp({ idp, t }));

const defaults = loadConfig({}).idp;
const person = (groups: string[] = []) => {
  const username = t.unique('r');
  return idp.addUser({ username, groups, attributes: { email: `${username}@example.com` } });
};
const me = async (app: UpliftApp | TestApp, user: FakeUser, groups?: string[]) => {
  clock.advance(1000);
  const res = await app.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(idp.token(user, { groups })) });
  expect(res.statusCode).toBe(200);
  return res.json() as { id: string; role: string; is_superuser: boolean };
};
const roleAudits = (userId: string) =>
  queryRows<{ before: unknown; after: unknown }>(
    t.database.db,
    sql`SELECT before, after FROM audit_logs WHERE action = 'role_assign' AND entity_id = ${userId} ORDER BY created_at`,
  );

describe('groups to roles (pure)', () => {
  it('gives superuser and ADMIN to an admin group, else the highest mapped role, else VIEWER', () => {
    expect(rolesFromGroups(['SuperUsers'], defaults)).toEqual({ role: 'ADMIN', isSuperuser: true });
    expect(rolesFromGroups(['Viewers', 'Admins'], defaults)).toEqual({ role: 'ADMIN', isSuperuser: true });
    expect(rolesFromGroups(['Viewers', 'Analysts', 'Developers'], defaults)).toEqual({ role: 'DEVELOPER', isSuperuser: false });
    expect(rolesFromGroups(['Analysts', 'Viewers'], defaults)).toEqual({ role: 'ANALYST', isSuperuser: false });
    expect(rolesFromGroups(['Sales'], defaults)).toEqual({ role: 'VIEWER', isSuperuser: false });
    expect(rolesFromGroups([], defaults)).toEqual({ role: 'VIEWER', isSuperuser: false });
  });

  it('matches group names case-sensitively, and a mapped ADMIN group is not a superuser group', () => {
    expect(rolesFromGroups(['admins', 'DEVELOPERS'], defaults)).toEqual({ role: 'VIEWER', isSuperuser: false });
    const rules = { groupRoles: { Ops: 'ADMIN' as const }, adminGroups: ['Root'] };
    expect(rolesFromGroups(['Ops'], rules)).toEqual({ role: 'ADMIN', isSuperuser: false });
    expect(rolesFromGroups(['Root'], rules)).toEqual({ role: 'ADMIN', isSuperuser: true });
    expect(rolesFromGroups(['toString', 'constructor'], rules)).toEqual({ role: 'VIEWER', isSuperuser: false });
  });

  it('accepts both forms of the pool issuer by default, only IDP_ISSUER when set', () => {
    expect(acceptedIssuers({ userPoolId: 'eu-west-1_Ab1', region: 'eu-west-1', issuer: undefined })).toEqual([
      'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Ab1',
      'https://issuer-cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Ab1',
    ]);
    expect(acceptedIssuers({ userPoolId: 'eu-west-1_Ab1', region: 'eu-west-1', issuer: 'http://x/y' })).toEqual(['http://x/y']);
  });
});

describe('identity-provider settings', () => {
  it('has the spec defaults', () => {
    expect(defaults.groupRoles).toEqual({ Admins: 'ADMIN', Developers: 'DEVELOPER', Analysts: 'ANALYST', Viewers: 'VIEWER' });
    expect(defaults.adminGroups).toEqual(['Admins', 'SuperUsers']);
    expect(loadConfig({ IDP_USER_POOL_ID: 'eu-central-1_x9Y' }).idp.region).toBe('eu-central-1');
  });

  it('reads role names in any letter case; the mapping replaces the defaults', () => {
    const c = loadConfig({ IDP_GROUP_ROLE_MAPPING: '{"Eng":"developer","Data":" Analyst "}', IDP_ADMIN_GROUPS: 'Root, Ops' });
    expect(c.idp.groupRoles).toEqual({ Eng: 'DEVELOPER', Data: 'ANALYST' });
    expect(c.idp.adminGroups).toEqual(['Root', 'Ops']);
  });

  it('stops startup on bad JSON, a non-object, an unknown role, a malformed pool id, an unknown provider', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ IDP_GROUP_ROLE_MAPPING: '{Eng: developer' }, /^IDP_GROUP_ROLE_MAPPING must be a JSON object/],
      [{ IDP_GROUP_ROLE_MAPPING: '["ADMIN"]' }, /^IDP_GROUP_ROLE_MAPPING must be a JSON object/],
      [{ IDP_GROUP_ROLE_MAPPING: '{"Eng":"owner"}' }, /^IDP_GROUP_ROLE_MAPPING maps a group to an unknown role/],
      [{ IDP_GROUP_ROLE_MAPPING: '{"Eng":3}' }, /^IDP_GROUP_ROLE_MAPPING maps a group to an unknown role/],
      [{ IDP_USER_POOL_ID: 'TestPool' }, /^IDP_USER_POOL_ID must have the form <region>_<id>/],
      [{ IDP_ENDPOINT: 'ftp://x' }, /^IDP_ENDPOINT must be an http or https URL/],
      [{ IDP_ISSUER: 'not a url' }, /^IDP_ISSUER must be an http or https URL/],
      [{ IDP_JWKS_URL: 'x' }, /^IDP_JWKS_URL must be an http or https URL/],
      [{ AUTH_PROVIDER: 'okta' }, /^AUTH_PROVIDER must be one of: local, cognito/],
      [{ SYNC_ROLES_ON_LOGIN: 'sometimes' }, /^SYNC_ROLES_ON_LOGIN must be a boolean/],
    ];
    for (const [env, message] of cases) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    }
  });
});

describe('groups to roles through HTTP', () => {
  it('applies every rule on first sight', async () => {
    expect(await me(t, person(['Admins']))).toMatchObject({ role: 'ADMIN', is_superuser: true });
    expect(await me(t, person(['SuperUsers']))).toMatchObject({ role: 'ADMIN', is_superuser: true });
    expect(await me(t, person(['Analysts', 'Developers']))).toMatchObject({ role: 'DEVELOPER', is_superuser: false });
    expect(await me(t, person(['Analysts']))).toMatchObject({ role: 'ANALYST', is_superuser: false });
    expect(await me(t, person(['Viewers']))).toMatchObject({ role: 'VIEWER', is_superuser: false });
    expect(await me(t, person(['admins', 'Marketing']))).toMatchObject({ role: 'VIEWER', is_superuser: false });
    expect(await me(t, person([]))).toMatchObject({ role: 'VIEWER', is_superuser: false });
  });

  it('gives a superuser from an admin group what superusers may do', async () => {
    const admin = person(['Admins']);
    const res = await t.inject({ method: 'GET', url: '/api/v1/admin/users', headers: bearer(idp.token(admin)) });
    expect(res.statusCode).toBe(200);
    const viewer = person(['Viewers']);
    expect((await t.inject({ method: 'GET', url: '/api/v1/admin/users', headers: bearer(idp.token(viewer)) })).statusCode).toBe(403);
  });

  it('uses IDP_GROUP_ROLE_MAPPING and IDP_ADMIN_GROUPS', async () => {
    const custom = await t.spawn(idp.env({ IDP_GROUP_ROLE_MAPPING: '{"Eng":"developer","Admins":"viewer"}', IDP_ADMIN_GROUPS: 'Root' }));
    expect(await me(custom, person(['Eng']))).toMatchObject({ role: 'DEVELOPER', is_superuser: false });
    expect(await me(custom, person(['Admins']))).toMatchObject({ role: 'VIEWER', is_superuser: false });
    expect(await me(custom, person(['Root']))).toMatchObject({ role: 'ADMIN', is_superuser: true });
    expect(await me(custom, person(['Developers']))).toMatchObject({ role: 'VIEWER', is_superuser: false });
  });

  it('with SYNC_ROLES_ON_LOGIN on, follows the groups of every request and audits only changes', async () => {
    const u = person(['Viewers']);
    const { id } = await me(t, u);
    expect(await me(t, u, ['Developers'])).toMatchObject({ role: 'DEVELOPER', is_superuser: false });
    expect(await me(t, u, ['Developers'])).toMatchObject({ role: 'DEVELOPER' });
    expect(await me(t, u, ['Admins'])).toMatchObject({ role: 'ADMIN', is_superuser: true });
    expect(await me(t, u, [])).toMatchObject({ role: 'VIEWER', is_superuser: false });
    expect(await roleAudits(id)).toEqual([
      { before: { role: 'VIEWER', is_superuser: false }, after: { role: 'DEVELOPER', is_superuser: false } },
      { before: { role: 'DEVELOPER', is_superuser: false }, after: { role: 'ADMIN', is_superuser: true } },
      { before: { role: 'ADMIN', is_superuser: true }, after: { role: 'VIEWER', is_superuser: false } },
    ]);
  });

  it('writes one role change for concurrent requests carrying new groups', async () => {
    const u = person(['Viewers']);
    const { id } = await me(t, u);
    await Promise.all(Array.from({ length: 6 }, () => me(t, u, ['Analysts'])));
    expect(await roleAudits(id)).toHaveLength(1);
  });

  it('answers 409 to a role change through PATCH /admin/users while sync is on', async () => {
    const admin = person(['Admins']);
    const target = await me(t, person(['Viewers']));
    const res = await t.inject({
      method: 'PATCH', url: `/api/v1/admin/users/${target.id}`, headers: bearer(idp.token(admin)), payload: { role: 'ANALYST' },
    });
    expect(res.statusCode).toBe(409);
    const [row] = await queryRows<{ role: string }>(t.database.db, sql`SELECT role FROM users WHERE id = ${target.id}`);
    expect(row.role).toBe('VIEWER');
  });

  it('with SYNC_ROLES_ON_LOGIN off, sets roles on first sight only, and admins may change them', async () => {
    const off = await t.spawn(idp.env({ SYNC_ROLES_ON_LOGIN: 'false' }));
    const u = person(['Analysts']);
    const { id } = await me(off, u);
    expect(await me(off, u, ['Admins'])).toMatchObject({ role: 'ANALYST', is_superuser: false });
    expect(await roleAudits(id)).toEqual([]);
    const admin = person(['Admins']);
    await me(off, admin);
    const res = await off.app.inject({
      method: 'PATCH', url: `/api/v1/admin/users/${id}`, headers: bearer(idp.token(admin)), payload: { role: 'DEVELOPER' },
    });
    expect(res.statusCode).toBe(200);
    expect(await me(off, u, ['Viewers'])).toMatchObject({ role: 'DEVELOPER' });
  });
});
