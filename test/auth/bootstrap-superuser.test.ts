import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapFirstSuperuser } from '../../src/modules/users/bootstrap.js';
import { testApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

/** A logger that keeps what it was told, by level. */
function recordingLog() {
  const lines: { level: 'info' | 'warn'; details: object; message: string }[] = [];
  return {
    lines,
    info: (details: object, message: string) => void lines.push({ level: 'info', details, message }),
    warn: (details: object, message: string) => void lines.push({ level: 'warn', details, message }),
  };
}

describe('bootstrap superuser', () => {
  it('does not fail the boot when the bootstrap account changed its email since, and says the username is taken', async () => {
    const first = { email: `${t.unique('root')}@example.com`, password: 'R00t-password', username: t.unique('admin') };
    expect(await t.services.users.ensureSuperuser(first)).toBe('created');
    await t.database.exec(`UPDATE users SET email = 'renamed-${first.username}@example.com' WHERE username = '${first.username}'`);
    expect(await t.services.users.ensureSuperuser(first)).toBe('username_taken');
    expect(await t.services.users.ensureSuperuser(first)).toBe('username_taken');
  });

  it('a new email whose username another account holds creates nothing and answers username_taken, not exists', async () => {
    const holder = await t.user();
    const email = `${t.unique('new')}@example.com`;
    expect(await t.services.users.ensureSuperuser({ email, password: 'R00t-password', username: holder.username })).toBe('username_taken');
    const [row] = await t.database.session((exec) => exec<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE lower(email) = lower($1)', [email]));
    expect(row.n).toBe(0);
  });

  it('at boot, a taken username is a warning naming it; a created or existing superuser is information', async () => {
    const holder = await t.user();
    const taken = recordingLog();
    const first = { email: `${t.unique('boot')}@example.com`, password: 'R00t-password', username: holder.username };
    expect(await bootstrapFirstSuperuser(t.services.users, first, taken)).toBe('username_taken');
    expect(taken.lines).toHaveLength(1);
    expect(taken.lines[0]).toMatchObject({ level: 'warn', details: { outcome: 'username_taken', username: holder.username } });
    expect(taken.lines[0].message).toContain(`"${holder.username}" is taken`);
    expect(taken.lines[0].message).toContain('no superuser was created');
    expect(taken.lines[0].message).toContain('FIRST_SUPERUSER_USERNAME');

    const fresh = { ...first, username: t.unique('admin') };
    const created = recordingLog();
    expect(await bootstrapFirstSuperuser(t.services.users, fresh, created)).toBe('created');
    const again = recordingLog();
    expect(await bootstrapFirstSuperuser(t.services.users, fresh, again)).toBe('exists');
    expect([...created.lines, ...again.lines].map((l) => l.level)).toEqual(['info', 'info']);
  });
});
