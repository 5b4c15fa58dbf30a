import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { UpliftApp } from '../../src/app.js';
import { REFETCH_FLOOR_MS, UNKNOWN_KID_WAIT_MS } from '../../src/modules/auth/idp/penalty-box.js';
import { fixedClock } from '../../src/platform/clock.js';
import { COULD_NOT_VALIDATE } from '../../src/platform/errors.js';
import type { TestApp } from '../helpers/test-app.js';
import { POOL_ID, type FakeIdp } from './fake-idp.js';
import { bearer, refusalLog, usersMe, startIdpApp, stopIdpApp } from './helpers.js';

let idp: FakeIdp;
let t: TestApp;
let log: ReturnType<typeof refusalLog>;
beforeAll(async () => {
  ({ idp, t } = await startIdpApp());
  log = refusalLog(t);
});
afterAll(() => stopIdpApp({ idp, t }));

const person = (label: string) => {
  const username = t.unique(label);
  return idp.addUser({ username, attributes: { email: `${username}@example.com` } });
};

async function refused(token: string): Promise<string[]> {
  log.take();
  const res = await usersMe(t, token);
  expect(res.statusCode).toBe(401);
  expect(res.json()).toEqual({ detail: COULD_NOT_VALIDATE });
  expect(res.headers['www-authenticate']).toBe('Bearer');
  return log.take();
}

describe('identity-provider bearer tokens', () => {
  it("accepts an access token of the pool and app client, reading the keys from <issuer>/.well-known/jwks.json", async () => {
    const res = await usersMe(t, idp.token(person('ok')));
    expect(res.statusCode).toBe(200);
    expect(idp.jwksRequests).toBeGreaterThan(0);
  });

  it('refuses an ID token of the same pool and client', async () => {
    expect(await refused(idp.token(person('id'), { tokenUse: 'id' }))).toEqual(['invalid_token']);
  });

  it("refuses another pool's token (wrong_issuer), even when signed with the pool's key", async () => {
    const other = `${idp.endpoint}/us-east-1_OtherPool`;
    expect(await refused(idp.token(person('pool'), { issuer: other }))).toEqual(['wrong_issuer']);
    expect(await refused(idp.token(person('pool'), { issuer: `https://cognito-idp.us-east-1.amazonaws.com/${POOL_ID}` }))).toEqual(['wrong_issuer']);
  });

  it("refuses another app client's token", async () => {
    expect(await refused(idp.token(person('client'), { clientId: 'someone-else' }))).toEqual(['invalid_token']);
  });

  it('refuses an expired token', async () => {
    expect(await refused(idp.token(person('exp'), { expiresInSeconds: -60 }))).toEqual(['invalid_token']);
  });

  it('refuses a token of the pool and client that has no exp (it would never expire)', async () => {
    // An undefined claim is left out of the signed JSON: the token carries no exp at all.
    expect(await refused(idp.token(person('noexp'), { extra: { exp: undefined } }))).toEqual(['invalid_token']);
  });

  it('refuses a bad signature: a key the JWKS does not hold, under a kid it does', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    expect(await refused(idp.token(person('sig'), { signWith: privateKey }))).toEqual(['invalid_token']);
    const good = idp.token(person('sig'));
    const [h, p] = good.split('.');
    const tampered = `${h}.${p}.${'A'.repeat(good.split('.')[2].length)}`;
    expect(await refused(tampered)).toEqual(['invalid_token']);
  });

  it('refuses a token without a subject (no_sub) and text that is no token', async () => {
    expect(await refused(idp.token(undefined, { sub: null }))).toEqual(['no_sub']);
    expect(await refused('not-a-jwt')).toEqual(['invalid_token']);
  });

  it('follows key rotation: a token under a new kid is verified after the keys are read again', async () => {
    const before = idp.jwksRequests;
    idp.rotate();
    const res = await usersMe(t, idp.token(person('rot')));
    expect(res.statusCode).toBe(200);
    expect(idp.jwksRequests).toBe(before + 1);
    // The new keys stay cached: another token under the same kid needs no fetch.
    expect((await usersMe(t, idp.token(person('rot')))).statusCode).toBe(200);
    expect(idp.jwksRequests).toBe(before + 1);
  });

  it('refuses a token under a kid the provider does not publish', async () => {
    expect(await refused(idp.token(person('kid'), { kid: 'no-such-kid' }))).toEqual(['invalid_token']);
  });

  it('never logs the token', () => {
    expect(log.spy).toHaveBeenCalled();
    expect(log.text()).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
  });
});

describe('JWKS re-reads for unknown kids', () => {
  // Each test gets its own app (its own key cache) on a clock it moves: the waits are read from the clock, not timers.
  let clock: ReturnType<typeof fixedClock>;
  let app: UpliftApp;
  const status = async (token: string) =>
    (await app.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) })).statusCode;
  const junk = (kid: string) => idp.token(person('junk'), { kid });

  beforeEach(async () => {
    clock = fixedClock(new Date());
    app = await t.spawn(idp.env(), clock);
    // The keys are cached once, as on any running instance.
    expect(await status(idp.token(person('warm')))).toBe(200);
  });

  it('verifies a rotated kid right after a token under a made-up kid (the made-up kid waits alone)', async () => {
    const before = idp.jwksRequests;
    expect(await status(junk('made-up'))).toBe(401);
    expect(idp.jwksRequests).toBe(before + 1);
    idp.rotate();
    clock.advance(REFETCH_FLOOR_MS);
    expect(await status(idp.token(person('rot')))).toBe(200);
    expect(idp.jwksRequests).toBe(before + 2);
    // The made-up kid itself still causes no re-read until its own wait ends.
    expect(await status(junk('made-up'))).toBe(401);
    expect(idp.jwksRequests).toBe(before + 2);
    clock.advance(UNKNOWN_KID_WAIT_MS - REFETCH_FLOOR_MS);
    expect(await status(junk('made-up'))).toBe(401);
    expect(idp.jwksRequests).toBe(before + 3);
  });

  it('sends the keys request again, once, when its connection closes without an answer', async () => {
    const before = idp.jwksRequests;
    idp.rotate();
    clock.advance(REFETCH_FLOOR_MS);
    idp.dropJwks(1);
    expect(await status(idp.token(person('drop')))).toBe(200);
    expect(idp.jwksRequests).toBe(before + 2);
    // Twice in a row: the provider counts as unreachable (503), not the token as invalid.
    idp.rotate();
    clock.advance(REFETCH_FLOOR_MS);
    idp.dropJwks(2);
    expect(await status(idp.token(person('drop')))).toBe(503);
    expect(idp.jwksRequests).toBe(before + 4);
  });

  it('reads the keys at most once per floor period, however many different made-up kids arrive', async () => {
    const before = idp.jwksRequests;
    for (let i = 0; i < 20; i += 1) expect(await status(junk(`made-up-${i}`))).toBe(401);
    expect(idp.jwksRequests).toBe(before + 1);
    // Also a genuinely new kid waits out the floor (401 meanwhile), then is read.
    idp.rotate();
    const fresh = idp.token(person('rot'));
    clock.advance(REFETCH_FLOOR_MS - 1);
    expect(await status(fresh)).toBe(401);
    expect(idp.jwksRequests).toBe(before + 1);
    clock.advance(1);
    expect(await status(fresh)).toBe(200);
    expect(idp.jwksRequests).toBe(before + 2);
  });

  it('shares one read among concurrent tokens under a new kid', async () => {
    const before = idp.jwksRequests;
    idp.rotate();
    const statuses = await Promise.all(Array.from({ length: 5 }, () => status(idp.token(person('burst')))));
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(idp.jwksRequests).toBe(before + 1);
  });
});

describe('identity-provider mode without a pool or client', () => {
  it('starts, and refuses every sign-in with reason not_configured', async () => {
    for (const env of [{ IDP_CLIENT_ID: '' }, { IDP_USER_POOL_ID: '' }] as Record<string, string>[]) {
      const other = await t.spawn(idp.env(env));
      const otherLog = refusalLog(other);
      const bearerRes = await other.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(idp.token(person('nc'))) });
      expect(bearerRes.statusCode).toBe(401);
      const login = await other.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'x', password: 'y' } });
      expect(login.statusCode).toBe(401);
      expect(login.json()).toEqual({ detail: COULD_NOT_VALIDATE });
      expect(otherLog.take()).toEqual(['not_configured', 'not_configured']);
      const forgot = await other.app.inject({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { username: 'x' } });
      expect(forgot.statusCode).toBe(503);
    }
  });

  it('answers 503 (not 401 or 500) while the signing keys cannot be read', async () => {
    const other = await t.spawn(idp.env({ IDP_JWKS_URL: 'http://127.0.0.1:1/jwks.json' }));
    const res = await other.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(idp.token(person('jw'))) });
    expect(res.statusCode).toBe(503);
    expect(res.json().detail).toMatch(/unreachable/);
  });
});
