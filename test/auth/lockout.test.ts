import bcrypt from 'bcrypt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decoyHash } from '../../src/modules/users/passwords.js';
import { fixedClock } from '../../src/platform/clock.js';
import { TEST_PASSWORD, testApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
const clock = fixedClock(new Date('2026-03-01T12:00:00Z'));
beforeAll(async () => {
  t = await testApp({ clock });
});
afterAll(() => t.close());

const login = (email: string, password: string) => t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
const failureRows = async (email: string) =>
  Number((await t.database.session((exec) => exec<{ n: string }>('SELECT count(*) AS n FROM login_failures WHERE email_key = lower($1)', [email])))[0].n);

describe('sign-in lockout', () => {
  it('counts concurrent wrong passwords atomically: only the first 10 are checked, the rest are locked', async () => {
    const u = await t.user();
    const codes = (await Promise.all(Array.from({ length: 16 }, () => login(u.email, 'Wrong-1a')))).map((r) => r.statusCode);
    expect(codes.filter((c) => c === 401)).toHaveLength(10);
    expect(codes.filter((c) => c === 423)).toHaveLength(6);
    expect((await login(u.email, TEST_PASSWORD)).statusCode).toBe(423);
  });

  it('folds the email as the database does', async () => {
    const username = t.unique('ivy');
    const email = `${username}@example.com`;
    await t.services.users.create(null, { username, email, password: TEST_PASSWORD, is_superuser: false });
    // U+0130 (capital I with dot above): the database lower-cases it to "i", JavaScript to "i" plus a combining dot.
    const lookalike = `\u0130${email.slice(1)}`;
    const [{ same }] = await t.database.session((exec) => exec<{ same: boolean }>('SELECT lower($1) = lower($2) AS same', [lookalike, email]));
    for (let i = 0; i < 10; i++) expect((await login(lookalike, 'Wrong-1a')).statusCode).toBe(401);
    expect((await login(email, TEST_PASSWORD)).statusCode).toBe(same ? 423 : 200);
  });

  it('uses a decoy hash at the configured cost', async () => {
    expect(bcrypt.getRounds(await decoyHash(4))).toBe(4);
    expect(bcrypt.getRounds(await decoyHash(11))).toBe(11);
  });

  it('the scheduler prunes failures older than the window', async () => {
    const email = `${t.unique('gone')}@example.com`;
    for (let i = 0; i < 3; i++) await login(email, 'Wrong-1a');
    expect(await failureRows(email)).toBe(3);
    clock.advance(16 * 60_000);
    await t.services.scheduler.runDue(clock.now());
    expect(await failureRows(email)).toBe(0);
  });
});
