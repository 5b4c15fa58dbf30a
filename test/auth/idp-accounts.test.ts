import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { COULD_NOT_VALIDATE } from '../../src/platform/errors.js';
import type { TestApp } from '../helpers/test-app.js';
import type { FakeIdp, FakeUser } from './fake-idp.js';
import { bearer, localAccount, refusalLog, usersMe, startIdpApp, stopIdpApp } from './helpers.js';

let idp: FakeIdp;
let t: TestApp;
let log: ReturnType<typeof refusalLog>;
beforeAll(async () => {
  ({ idp, t } = await startIdpApp());
  log = refusalLog(t);
});
afterAll(() => stopIdpApp({ idp, t }));

const person = (label: string, attributes: Record<string, string> = {}, username = t.unique(label)) =>
  idp.addUser({ username, attributes: { email: `${username}@example.com`, ...attributes } });

async function refusedWith(user: FakeUser): Promise<string[]> {
  log.take();
  const res = await usersMe(t, idp.token(user));
  expect(res.statusCode).toBe(401);
  expect(res.json()).toEqual({ detail: COULD_NOT_VALIDATE });
  return log.take();
}

const accountsOf = (externalId: string) =>
  queryRows<{ id: string }>(t.database.db, sql`SELECT id FROM users WHERE external_id = ${externalId}`);

describe('accounts of identity-provider users', () => {
  it('creates a passwordless account on first sight from the provider record (GetUser), linked by idp:<sub>', async () => {
    const u = person('new', { given_name: 'Ada', family_name: 'Lovelace' });
    const before = idp.callsOf('GetUser').length;
    const res = await usersMe(t, idp.token(u));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      username: u.username, email: u.attributes.email, full_name: 'Ada Lovelace', role: 'VIEWER',
      is_superuser: false, is_active: true, external_id: `idp:${u.sub}`,
    });
    expect(idp.callsOf('GetUser').length).toBe(before + 1);
    const [row] = await queryRows<{ hashed_password: string | null }>(t.database.db, sql`SELECT hashed_password FROM users WHERE external_id = ${`idp:${u.sub}`}`);
    expect(row.hashed_password).toBeNull();
    // Known from now on: no further provider lookups.
    expect((await usersMe(t, idp.token(u))).json().id).toBe(res.json().id);
    expect(idp.callsOf('GetUser').length).toBe(before + 1);
    const [audit] = await queryRows<{ action: string }>(t.database.db, sql`SELECT action FROM audit_logs WHERE entity_id = ${res.json().id}`);
    expect(audit.action).toBe('user_create');
  });

  it('builds full_name from whichever name part is set, or leaves it null', async () => {
    expect((await usersMe(t, idp.token(person('given', { given_name: 'Grace' })))).json().full_name).toBe('Grace');
    expect((await usersMe(t, idp.token(person('family', { family_name: 'Hopper' })))).json().full_name).toBe('Hopper');
    expect((await usersMe(t, idp.token(person('none')))).json().full_name).toBeNull();
  });

  it('never updates username, email or name from the provider', async () => {
    const u = person('keep', { given_name: 'Old' });
    const first = (await usersMe(t, idp.token(u))).json();
    u.attributes = { ...u.attributes, email: 'changed@example.com', given_name: 'New' };
    const again = (await usersMe(t, idp.token(u, { username: 'renamed' }))).json();
    expect(again).toMatchObject({ id: first.id, username: first.username, email: first.email, full_name: 'Old' });
  });

  it('refuses when a local account (with a password) holds the username: local_password', async () => {
    const local = await localAccount(t);
    expect(await refusedWith(person('lp', {}, local.username))).toEqual(['local_password']);
  });

  it("refuses when another subject's account holds the username: linked_elsewhere", async () => {
    const first = person('le');
    expect((await usersMe(t, idp.token(first))).statusCode).toBe(200);
    idp.users.delete(first.username);
    const second = person('le2', { email: `other-${first.username}@example.com` }, first.username);
    expect(await refusedWith(second)).toEqual(['linked_elsewhere']);
  });

  it('refuses when an unlinked passwordless account holds the username: legacy_unlinked', async () => {
    const username = t.unique('legacy');
    await t.database.exec(
      `INSERT INTO users (id, username, email, role) VALUES (gen_random_uuid(), '${username}', '${username}@old.example.com', 'VIEWER')`,
    );
    expect(await refusedWith(person('lu', {}, username))).toEqual(['legacy_unlinked']);
  });

  it('refuses a user without an email: no_email', async () => {
    const u = person('ne');
    delete u.attributes.email;
    expect(await refusedWith(u)).toEqual(['no_email']);
    u.attributes.email = '   ';
    expect(await refusedWith(u)).toEqual(['no_email']);
  });

  it('links the email only when the provider says it is verified: anything but true or "true" is email_unverified', async () => {
    for (const value of ['false', 'True', '1', '', 'yes']) {
      const u = person('unverified', { email_verified: value });
      expect(await refusedWith(u), value).toEqual(['email_unverified']);
      expect(await accountsOf(`idp:${u.sub}`)).toEqual([]);
    }
    const silent = person('silent');
    delete silent.attributes.email_verified;
    expect(await refusedWith(silent)).toEqual(['email_unverified']);
    // The record's text "true" (as GetUser sends it) links.
    expect((await usersMe(t, idp.token(person('verified', { email_verified: 'true' })))).statusCode).toBe(200);
  });

  it("reads the token's own email_verified claim when it has one (the boolean true or the text \"true\")", async () => {
    for (const claim of [true, 'true']) {
      const u = person('claim', { email_verified: 'false' });
      expect((await usersMe(t, idp.token(u, { extra: { email_verified: claim } }))).statusCode, String(claim)).toBe(200);
    }
    for (const claim of [false, 'false', 1, 'TRUE', null]) {
      const u = person('claim-no');
      log.take();
      const res = await usersMe(t, idp.token(u, { extra: { email_verified: claim } }));
      // null reads as no claim, and the record (verified) decides.
      expect(res.statusCode, String(claim)).toBe(claim === null ? 200 : 401);
      if (claim !== null) expect(log.take()).toEqual(['email_unverified']);
    }
  });

  it('refuses when another account has the email in any letter case: email_taken', async () => {
    const local = await localAccount(t);
    expect(await refusedWith(person('et', { email: local.email.toUpperCase() }))).toEqual(['email_taken']);
  });

  it('refuses values longer than an account holds: field_too_long', async () => {
    expect(await refusedWith(person('long', {}, `u${'x'.repeat(110)}`))).toEqual(['field_too_long']);
    expect(await refusedWith(person('long', { given_name: 'n'.repeat(200), family_name: 'm'.repeat(100) }))).toEqual(['field_too_long']);
    expect(await refusedWith(person('long', { email: `${'e'.repeat(250)}@example.com` }))).toEqual(['field_too_long']);
  });

  it('refuses when the account cannot be saved: commit_failed', async () => {
    const username = t.unique('boom');
    await t.database.exec(`
      CREATE OR REPLACE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.username LIKE 'boom%' THEN RAISE EXCEPTION 'refused by test trigger'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_boom BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION refuse_boom();
    `);
    try {
      expect(await refusedWith(person('cf', {}, username))).toEqual(['commit_failed']);
    } finally {
      await t.database.exec('DROP TRIGGER refuse_boom ON users; DROP FUNCTION refuse_boom();');
    }
  });

  it('refuses a deactivated account', async () => {
    const u = person('off');
    const id = (await usersMe(t, idp.token(u))).json().id;
    await t.database.exec(`UPDATE users SET is_active = false WHERE id = '${id}'`);
    expect(await refusedWith(u)).toEqual(['inactive']);
  });

  it('creates one account for concurrent first requests of one subject, in one process and across two', async () => {
    const u = person('race');
    const other = await t.spawn(idp.env());
    const requests = Array.from({ length: 8 }, (_, i) =>
      (i % 2 ? other.app : t.app).inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(idp.token(u)) }),
    );
    const answers = await Promise.all(requests);
    expect(answers.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((r) => r.json().id)).size).toBe(1);
    expect(await accountsOf(`idp:${u.sub}`)).toHaveLength(1);
  });
});
