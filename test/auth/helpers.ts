import { vi, type MockInstance } from 'vitest';
import { testApp, type TestApp, type TestOptions } from '../helpers/test-app.js';
import { FakeIdp } from './fake-idp.js';

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export const usersMe = (t: TestApp, token: string) => t.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) });

/** Watches the identity-provider refusal log of an app: the reasons logged since the last `take()`. */
export function refusalLog(t: { services: TestApp['services'] }) {
  const log = t.services.idpAuth!.log;
  const spy = vi.spyOn(log, 'info') as unknown as MockInstance<(obj: Record<string, unknown>, msg?: string) => void>;
  let seen = 0;
  return {
    spy,
    take(): string[] {
      const calls = spy.mock.calls.slice(seen);
      seen = spy.mock.calls.length;
      return calls.map((c) => String(c[0]?.reason));
    },
    /** Everything logged so far, as text (to prove a token never appears in it). */
    text: () => JSON.stringify(spy.mock.calls),
  };
}

/** A local account (with a password), made as an admin would: sign-in through the API is the provider's now. */
export async function localAccount(t: TestApp): Promise<{ id: string; username: string; email: string }> {
  const username = t.unique('local');
  const view = await t.services.users.create(null, { username, email: `${username}@example.com`, password: 'Passw0rd!x', is_superuser: false });
  return { id: view.id, username, email: view.email! };
}

/** A fake provider and an app in identity-provider mode pointed at it (one pair per test file). */
export async function startIdpApp(env: Record<string, string> = {}, clock?: TestOptions['clock']): Promise<{ idp: FakeIdp; t: TestApp }> {
  const idp = await FakeIdp.start();
  const t = await testApp({ env: idp.env(env), clock });
  return { idp, t };
}

export async function stopIdpApp(pair: { idp: FakeIdp; t: TestApp }): Promise<void> {
  await pair.t.close();
  await pair.idp.close();
}
