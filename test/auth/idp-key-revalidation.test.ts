import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNREACHABLE } from '../../src/modules/auth/idp/provider.js';
import { fixedClock } from '../../src/platform/clock.js';
import type { TestApp } from '../helpers/test-app.js';
import type { FakeIdp, FakeUser } from './fake-idp.js';
import { bearer, startIdpApp, stopIdpApp } from './helpers.js';

// The pool's administrative calls are signed: any credentials do for the fake provider.
process.env.AWS_ACCESS_KEY_ID ??= 'AKIDTESTTESTTEST';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test-secret';

const REVALIDATE = 900_000;
const GRACE = 3_600_000;
const clock = fixedClock(new Date());
let idp: FakeIdp;
let t: TestApp;
beforeAll(async () => {
  ({ idp, t } = await startIdpApp({ IDP_REVALIDATE_SECONDS: '900', IDP_REVALIDATE_GRACE_SECONDS: '3600' }, clock));
});
afterAll(() => stopIdpApp({ idp, t }));

/** A provider user with an account here (first sight through its token) and an sdk:ruleset key made with it. */
async function owner(groups: string[]): Promise<{ user: FakeUser; key: string }> {
  const username = t.unique('owner');
  const user = idp.addUser({ username, groups, attributes: { email: `${username}@example.com` } });
  const res = await t.inject({
    method: 'POST', url: '/api/v1/api-keys',
    headers: bearer(idp.token(user, { expiresInSeconds: 30 * 86_400 })),
    payload: { name: 'sdk', scopes: ['sdk:ruleset'] },
  });
  expect(res.statusCode).toBe(201);
  return { user, key: res.json().key };
}
const ruleset = (key: string) => t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: { 'x-api-key': key } });
/** Needs an owner who is ADMIN or DEVELOPER: 403 otherwise, decided before the (empty) body is looked at (422). */
const batchAssign = (key: string) => t.inject({ method: 'POST', url: '/api/v1/tracking/assign/batch', headers: { 'x-api-key': key }, payload: {} });
const listUsersCalls = () => idp.callsOf('ListUsers').length;

describe('API keys of identity-provider users are re-checked with the provider (IDP_REVALIDATE_SECONDS)', () => {
  it('stops a key whose owner was disabled at the provider, once the interval has passed, and asks once per interval', async () => {
    const { user, key } = await owner(['Developers']);
    expect((await ruleset(key)).statusCode).toBe(200);
    const calls = listUsersCalls();
    user.enabled = false;
    clock.advance(REVALIDATE - 1000);
    expect((await ruleset(key)).statusCode).toBe(200);
    expect(listUsersCalls()).toBe(calls);
    clock.advance(1000);
    const [a, b] = await Promise.all([ruleset(key), ruleset(key)]);
    expect([a.statusCode, b.statusCode]).toEqual([401, 401]);
    expect(a.json()).toEqual({ detail: 'Invalid or missing API key' });
    expect(listUsersCalls()).toBe(calls + 1);
    // Enabled again: the key works after the next check.
    user.enabled = true;
    clock.advance(REVALIDATE);
    expect((await ruleset(key)).statusCode).toBe(200);
  });

  it('stops a key whose owner was removed from the provider', async () => {
    const { user, key } = await owner(['Developers']);
    expect((await ruleset(key)).statusCode).toBe(200);
    idp.users.delete(user.username);
    clock.advance(REVALIDATE);
    expect((await ruleset(key)).statusCode).toBe(401);
  });

  it('takes away what the lost group gave (SYNC_ROLES_ON_LOGIN): the owner is DEVELOPER no more', async () => {
    const { user, key } = await owner(['Developers']);
    expect((await batchAssign(key)).statusCode).toBe(422);
    user.groups = [];
    clock.advance(REVALIDATE);
    const res = await batchAssign(key);
    expect(res.statusCode).toBe(403);
    expect((await ruleset(key)).statusCode).toBe(200);
    const account = (await t.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(idp.token(user, { expiresInSeconds: 30 * 86_400 })) })).json();
    expect(account.role).toBe('VIEWER');
  });

  it('keeps the last answer through a provider outage for IDP_REVALIDATE_GRACE_SECONDS, then refuses with 503', async () => {
    const { key } = await owner(['Developers']);
    expect((await ruleset(key)).statusCode).toBe(200);
    idp.failUntilRecovered('ListUsers', { type: 'InternalErrorException' });
    try {
      clock.advance(REVALIDATE);
      expect((await ruleset(key)).statusCode).toBe(200);
      clock.advance(GRACE - 1000);
      expect((await ruleset(key)).statusCode).toBe(200);
      clock.advance(1000);
      const refused = await ruleset(key);
      expect(refused.statusCode).toBe(503);
      expect(refused.json()).toEqual({ detail: UNREACHABLE });
      expect(refused.headers['retry-after']).toBeDefined();
    } finally {
      idp.recover('ListUsers');
    }
    expect((await ruleset(key)).statusCode).toBe(200);
  });

});
