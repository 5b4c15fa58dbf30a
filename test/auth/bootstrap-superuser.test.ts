import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('bootstrap superuser', () => {
  it('does not fail the boot when the bootstrap account changed its email since', async () => {
    const first = { email: `${t.unique('root')}@example.com`, password: 'R00t-password', username: t.unique('admin') };
    expect(await t.services.users.ensureSuperuser(first)).toBe('created');
    await t.database.exec(`UPDATE users SET email = 'renamed-${first.username}@example.com' WHERE username = '${first.username}'`);
    expect(await t.services.users.ensureSuperuser(first)).toBe('exists');
    expect(await t.services.users.ensureSuperuser(first)).toBe('exists');
  });
});
