import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
