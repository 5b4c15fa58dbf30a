import { queryRows } from '../../src/db/client.js';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD, testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const put = (user: TestUser, id: string, payload: Record<string, unknown>, admin = false) =>
  t.inject({ method: 'PUT', url: `/api/v1/${admin ? 'admin/' : ''}users/${id}`, headers: user.headers, payload });
const patch = (user: TestUser, id: string, payload: Record<string, unknown>) =>
  t.inject({ method: 'PATCH', url: `/api/v1/admin/users/${id}`, headers: user.headers, payload });
const getUser = async (id: string) => (await t.services.users.get(id)) as Record<string, unknown>;
const auditFor = async (entityId: string) => {
  return queryRows<{ action: string; before: unknown; after: unknown; actor_id: string }>(
    t.database.db,
    sql`SELECT action, before, after, actor_id FROM audit_logs WHERE entity_id = ${entityId} ORDER BY created_at, id`,
  );
};

describe('create and read accounts', () => {
  it('lets a superuser create a VIEWER account (201) and refuses others (403) and strangers (401)', async () => {
    const su = await t.user({ superuser: true });
    const username = t.unique('new');
    const body = { username, email: `${username}@Example.com`, password: 'Str0ng-pass', full_name: 'Ada Lovelace' };
    const res = await t.inject({ method: 'POST', url: '/api/v1/users/', headers: su.headers, payload: body });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ username, role: 'VIEWER', is_active: true, is_superuser: false, full_name: 'Ada Lovelace', external_id: null });
    expect(res.body).not.toContain('Str0ng-pass');
    const admin = await t.user({ role: 'ADMIN' });
    expect((await t.inject({ method: 'POST', url: '/api/v1/users/', headers: admin.headers, payload: { ...body, username: t.unique() } })).statusCode).toBe(403);
    expect((await t.inject({ method: 'POST', url: '/api/v1/users/', payload: body })).statusCode).toBe(401);
  });

  it('keeps email unique in any letter case and usernames unique (409)', async () => {
    const su = await t.user({ superuser: true });
    const existing = await t.user();
    const dupEmail = await t.inject({
      method: 'POST', url: '/api/v1/users/', headers: su.headers,
      payload: { username: t.unique(), email: existing.email.toUpperCase(), password: 'Str0ng-pass' },
    });
    expect(dupEmail.statusCode).toBe(409);
    expect(dupEmail.json()).toEqual({ detail: 'Email already registered' });
    const dupName = await t.inject({
      method: 'POST', url: '/api/v1/users/', headers: su.headers,
      payload: { username: existing.username, email: `${t.unique()}@example.com`, password: 'Str0ng-pass' },
    });
    expect(dupName.json()).toEqual({ detail: 'Username already registered' });
  });

  it('applies the password rule (422) on create', async () => {
    const su = await t.user({ superuser: true });
    for (const password of ['Sh0rt', 'nouppercase1', 'NOLOWERCASE1', 'NoDigitsHere', `Aa1${'€'.repeat(24)}`]) {
      const res = await t.inject({
        method: 'POST', url: '/api/v1/users/', headers: su.headers,
        payload: { username: t.unique(), email: `${t.unique()}@example.com`, password },
      });
      expect(res.statusCode, password).toBe(422);
      expect(res.json().detail[0]).toMatchObject({ type: 'value_error', loc: ['body', 'password'] });
      expect(res.body).not.toContain(password);
    }
  });

  it('lists all accounts to superusers and only the caller to others', async () => {
    const su = await t.user({ superuser: true });
    const u = await t.user();
    const all = await t.inject({ method: 'GET', url: '/api/v1/users/?limit=100', headers: su.headers });
    expect(all.json().length).toBeGreaterThan(1);
    const own = await t.inject({ method: 'GET', url: '/api/v1/users/', headers: u.headers });
    expect(own.json().map((x: { id: string }) => x.id)).toEqual([u.id]);
  });

  it('reads any account when signed in; unknown id 404 User not found', async () => {
    const u = await t.user();
    const other = await t.user();
    expect((await t.inject({ method: 'GET', url: `/api/v1/users/${other.id}`, headers: u.headers })).json().id).toBe(other.id);
    const missing = await t.inject({ method: 'GET', url: '/api/v1/users/00000000-0000-4000-8000-000000000000', headers: u.headers });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: 'User not found' });
  });
});

describe('user rules on update', () => {
  it('rule 1: a non-superuser must resend their own username and email; other fields of theirs are ignored', async () => {
    const u = await t.user();
    const changed = await put(u, u.id, { username: t.unique(), email: u.email });
    expect(changed.statusCode).toBe(403);
    expect(changed.json()).toEqual({ detail: "Only an administrator can change an account's email address or username." });
    expect((await put(u, u.id, { username: u.username, email: 'other@example.com' })).statusCode).toBe(403);
    const ok = await put(u, u.id, { username: u.username, email: u.email, full_name: 'New Name', is_superuser: true, is_active: false });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ full_name: 'New Name', is_superuser: false, is_active: true });
  });

  it('rule 4: changing only the letter case of one’s own email is accepted', async () => {
    const u = await t.user();
    const res = await put(u, u.id, { username: u.username, email: u.email.toUpperCase() });
    expect(res.statusCode).toBe(200);
    expect(res.json().email).toBe(u.email.toUpperCase());
  });

  it('a non-superuser cannot update another account (403), nothing changes', async () => {
    const u = await t.user();
    const other = await t.user();
    const res = await put(u, other.id, { username: other.username, email: other.email, full_name: 'Hacked' });
    expect(res.statusCode).toBe(403);
    expect((await getUser(other.id)).full_name).toBeNull();
  });

  it('rule 2: a superuser resets another password through PUT; nobody sets their own that way', async () => {
    const su = await t.user({ superuser: true });
    const u = await t.user();
    const reset = await put(su, u.id, { username: u.username, email: u.email, password: 'Res3t-password' });
    expect(reset.statusCode).toBe(200);
    expect((await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: u.email, password: 'Res3t-password' } })).statusCode).toBe(200);
    const weak = await put(su, u.id, { username: u.username, email: u.email, password: 'weak' });
    expect(weak.statusCode).toBe(422);
    for (const [caller, admin] of [[su, false], [su, true], [u, false]] as const) {
      const own = await put(caller, caller.id, { username: caller.username, email: caller.email, password: 'An0ther-pass' }, admin);
      expect(own.statusCode).toBe(403);
    }
    const keep = await put(su, u.id, { username: u.username, email: u.email, password: null });
    expect(keep.statusCode).toBe(200);
    expect((await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: u.email, password: 'Res3t-password' } })).statusCode).toBe(200);
  });

  it('rule 3: a superuser cannot turn off their own flags (400, is_superuser error wins), re-sending true is fine', async () => {
    const su = await t.user({ superuser: true });
    const base = { username: su.username, email: su.email };
    const both = await put(su, su.id, { ...base, is_superuser: false, is_active: false });
    expect(both.statusCode).toBe(400);
    expect(both.json()).toEqual({ detail: 'Superusers cannot remove their own superuser status' });
    const active = await patch(su, su.id, { is_active: false });
    expect(active.json()).toEqual({ detail: 'Superusers cannot deactivate themselves' });
    const same = await put(su, su.id, { ...base, is_superuser: true, is_active: true });
    expect(same.statusCode).toBe(200);
    expect(await getUser(su.id)).toMatchObject({ is_superuser: true, is_active: true });
    expect((await auditFor(su.id)).filter((e) => e.action !== 'user_create')).toEqual([]);
  });

  it('rule 4: email and username stay unique on update (409), nothing written', async () => {
    const su = await t.user({ superuser: true });
    const a = await t.user();
    const b = await t.user();
    const res = await put(su, a.id, { username: a.username, email: b.email.toUpperCase(), full_name: 'Changed' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: 'Email already registered' });
    expect((await put(su, a.id, { username: b.username, email: a.email })).json()).toEqual({ detail: 'Username already registered' });
    expect((await getUser(a.id)).full_name).toBeNull();
  });

  it('rule 6: superuser and activity changes write role_assign and user_(de)activate entries', async () => {
    const su = await t.user({ superuser: true });
    const u = await t.user();
    expect((await patch(su, u.id, { is_superuser: true })).statusCode).toBe(200);
    expect((await patch(su, u.id, { is_active: false })).statusCode).toBe(200);
    expect((await patch(su, u.id, { is_active: true })).statusCode).toBe(200);
    const entries = (await auditFor(u.id)).filter((e) => e.action !== 'user_create');
    expect(entries).toEqual([
      { action: 'role_assign', before: { role: 'VIEWER', is_superuser: false }, after: { role: 'VIEWER', is_superuser: true }, actor_id: su.id },
      { action: 'user_deactivate', before: { is_active: true }, after: { is_active: false }, actor_id: su.id },
      { action: 'user_activate', before: { is_active: false }, after: { is_active: true }, actor_id: su.id },
    ]);
  });

  it('rule 6: when the audit entry cannot be written, nothing is saved', async () => {
    const su = await t.user({ superuser: true });
    const u = await t.user();
    // A state the API cannot reach: the audit table refuses this account's deactivation entries.
    await t.database.exec(`
      CREATE OR REPLACE FUNCTION refuse_audit() RETURNS trigger AS $$
      BEGIN IF NEW.entity_id = '${u.id}' THEN RAISE EXCEPTION 'audit store unavailable'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
      CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_logs FOR EACH ROW EXECUTE FUNCTION refuse_audit();`);
    try {
      const res = await patch(su, u.id, { is_active: false, full_name: 'Changed' });
      expect(res.statusCode).toBe(500);
      expect(res.json().request_id).toBeTruthy();
      expect(await getUser(u.id)).toMatchObject({ is_active: true, full_name: null });
    } finally {
      await t.database.exec('DROP TRIGGER refuse_audit ON audit_logs; DROP FUNCTION refuse_audit();');
    }
  });

  // Under the identity provider (409 while roles are synced) rule 10 is proven with provider tokens in test/auth/idp-roles.test.ts.
  it('rule 10: PATCH changes the role under the local provider', async () => {
    const su = await t.user({ superuser: true });
    const u = await t.user();
    const res = await patch(su, u.id, { role: 'DEVELOPER' });
    expect(res.statusCode).toBe(200);
    expect(res.json().role).toBe('DEVELOPER');
    expect((await auditFor(u.id)).at(-1)).toMatchObject({ action: 'role_assign', before: { role: 'VIEWER' }, after: { role: 'DEVELOPER' } });
  });

  it('rule 5: two superusers turning each other off concurrently: one wins, the other is refused', async () => {
    const a = await t.user({ superuser: true });
    const b = await t.user({ superuser: true });
    const [ra, rb] = await Promise.all([patch(a, b.id, { is_active: false }), patch(b, a.id, { is_active: false })]);
    const codes = [ra.statusCode, rb.statusCode].sort();
    expect(codes[0]).toBe(200);
    expect([400, 401]).toContain(codes[1]);
    const states = [(await getUser(a.id)).is_active, (await getUser(b.id)).is_active];
    expect(states.filter(Boolean)).toHaveLength(1);
  });

  it.runIf(Boolean(process.env.TEST_DATABASE_URL))('rule 5: waits for a change in progress, then rechecks the caller', async () => {
    const a = await t.user({ superuser: true });
    const b = await t.user({ superuser: true });
    const client = await t.pgClient();
    try {
      // Another transaction is changing the caller: it loses superuser while the request waits.
      await client.query('BEGIN');
      await client.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [a.id]);
      const pending = patch(a, b.id, { is_active: false });
      // Postgres lists the request's session as waiting on a lock once it is queued behind this transaction.
      const waiting = async () =>
        (await client.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()")).rowCount;
      while (!(await waiting()));
      await client.query('UPDATE users SET is_superuser = false WHERE id = $1', [a.id]);
      await client.query('COMMIT');
      const res = await pending;
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ detail: 'Not enough permissions' });
      expect((await getUser(b.id)).is_active).toBe(true);

      // Waiting longer than 5 seconds gives 500 and nothing is written.
      await client.query('BEGIN');
      await client.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [b.id]);
      const c = await t.user({ superuser: true });
      const timedOut = await patch(c, b.id, { is_active: false });
      await client.query('ROLLBACK');
      expect(timedOut.statusCode).toBe(500);
      expect((await getUser(b.id)).is_active).toBe(true);
    } finally {
      await client.end();
    }
  }, 20_000);
});

describe('deleting accounts', () => {
  it('rule 7: superusers cannot delete themselves; others cannot delete other accounts; unknown 404', async () => {
    const su = await t.user({ superuser: true });
    const u = await t.user();
    const other = await t.user();
    const self = await t.inject({ method: 'DELETE', url: `/api/v1/users/${su.id}`, headers: su.headers });
    expect(self.statusCode).toBe(400);
    expect(self.json()).toEqual({ detail: 'Superusers cannot delete themselves' });
    const foreign = await t.inject({ method: 'DELETE', url: `/api/v1/users/${other.id}`, headers: u.headers });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toEqual({ detail: 'Not enough permissions' });
    const missing = await t.inject({ method: 'DELETE', url: '/api/v1/users/00000000-0000-4000-8000-000000000002', headers: su.headers });
    expect(missing.json()).toEqual({ detail: 'User not found' });
    expect((await getUser(other.id)).id).toBe(other.id);
  });

  it('rule 8: deleting an account removes its API keys; a user may delete themselves', async () => {
    const su = await t.user({ superuser: true });
    const u = await t.user();
    const key = await t.apiKey(u);
    expect(await t.services.apiKeys.resolve(key.key)).toBeDefined();
    const res = await t.inject({ method: 'DELETE', url: `/api/v1/admin/users/${u.id}`, headers: su.headers });
    expect(res.statusCode).toBe(204);
    expect(await t.services.apiKeys.resolve(key.key)).toBeUndefined();
    const keys = await queryRows(t.database.db, sql`SELECT id FROM api_keys WHERE id = ${key.id}`);
    expect(keys).toHaveLength(0);
    expect((await t.inject({ method: 'GET', url: '/api/v1/users/me', headers: u.headers })).statusCode).toBe(401);

    const self = await t.user();
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/users/${self.id}`, headers: self.headers })).statusCode).toBe(204);
  });
});

describe('first superuser bootstrap', () => {
  it('creates the superuser once and is idempotent', async () => {
    const email = `${t.unique('boot')}@example.com`;
    const first = { email, password: 'B00tstrap-pass', username: t.unique('admin') };
    expect(await t.services.users.ensureSuperuser(first)).toBe('created');
    expect(await t.services.users.ensureSuperuser({ ...first, email: email.toUpperCase() })).toBe('exists');
    const res = await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'B00tstrap-pass' } });
    const me = await t.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: `Bearer ${res.json().access_token}` } });
    expect(me.json()).toMatchObject({ is_superuser: true, is_active: true, username: first.username });
  });
});

it('keeps the password hash out of every response', async () => {
  const su = await t.user({ superuser: true });
  const res = await t.inject({ method: 'GET', url: '/api/v1/admin/users', headers: su.headers });
  expect(res.body).not.toContain('$2b$');
  expect(res.body).not.toContain(TEST_PASSWORD);
});
