import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ruleFor } from '../../src/platform/rate-limit.js';
import { TEST_PASSWORD, testApp, testConfig, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const form = (username: string, password: string) => ({
  method: 'POST' as const,
  url: '/api/v1/auth/token',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams({ username, password }).toString(),
});
const login = (email: string, password: string) => ({ method: 'POST' as const, url: '/api/v1/auth/login', payload: { email, password } });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('sign-in (local provider)', () => {
  it('issues a bearer token through the form route, with the email in any letter case', async () => {
    const u = await t.user();
    const res = await t.inject(form(u.email.toUpperCase(), TEST_PASSWORD));
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    const me = await t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(body.access_token) });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ id: u.id, email: u.email, role: 'VIEWER' });
    expect(me.json()).not.toHaveProperty('hashed_password');
  });

  it('issues a token through the JSON route and records last_login', async () => {
    const u = await t.user();
    const res = await t.inject(login(u.email, TEST_PASSWORD));
    expect(res.statusCode).toBe(200);
    const me = await t.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(res.json().access_token) });
    expect(me.json().last_login).not.toBeNull();
  });

  it('refuses a wrong password or unknown email with 401', async () => {
    const u = await t.user();
    for (const res of [await t.inject(login(u.email, 'Wrong-passw0rd')), await t.inject(form('nobody@example.com', TEST_PASSWORD))]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ detail: 'Incorrect email or password' });
    }
  });

  it('refuses a password over 72 bytes instead of comparing a truncated one', async () => {
    const u = await t.user({ password: `Aa1${'x'.repeat(69)}` });
    const res = await t.inject(login(u.email, `Aa1${'x'.repeat(69)}EXTRA`));
    expect(res.statusCode).toBe(401);
  });

  it('answers 422 for missing sign-in fields', async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'a@b.c' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual([{ type: 'missing', loc: ['body', 'password'], msg: 'Field required' }]);
  });

  it('tells an inactive account so only after a correct password', async () => {
    const u = await t.user({ active: false });
    expect((await t.inject(login(u.email, TEST_PASSWORD))).json()).toEqual({ detail: 'Inactive user' });
    expect((await t.inject(login(u.email, 'Wrong-passw0rd'))).statusCode).toBe(401);
  });

  it('answers 404 for the identity-provider routes under the local provider', async () => {
    for (const path of ['signup', 'confirm', 'forgot-password', 'reset-password', 'refresh']) {
      const res = await t.inject({ method: 'POST', url: `/api/v1/auth/${path}`, payload: {} });
      expect(res.statusCode, path).toBe(404);
    }
  });
});

describe('bearer tokens', () => {
  it('refuses missing, malformed, forged and expired tokens with 401 Could not validate credentials', async () => {
    const u = await t.user();
    const secret = new TextEncoder().encode(testConfig().secretKey);
    const expired = await new SignJWT({ type: 'access' }).setProtectedHeader({ alg: 'HS256' }).setSubject(u.id)
      .setIssuedAt(1_600_000_000).setExpirationTime(1_600_000_060).sign(secret);
    const forged = await new SignJWT({ type: 'access' }).setProtectedHeader({ alg: 'HS256' }).setSubject(u.id)
      .setExpirationTime('1h').sign(new TextEncoder().encode('another-secret-another-secret-another'));
    for (const headers of [{}, bearer('not-a-jwt'), bearer(expired), bearer(forged), { authorization: `Basic ${u.token}` }]) {
      const res = await t.inject({ method: 'GET', url: '/api/v1/users/me', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ detail: 'Could not validate credentials' });
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('refuses a correctly signed access token that has no exp (it would never expire)', async () => {
    const u = await t.user();
    const secret = new TextEncoder().encode(testConfig().secretKey);
    const forever = await new SignJWT({ type: 'access' }).setProtectedHeader({ alg: 'HS256' }).setSubject(u.id).setIssuedAt().sign(secret);
    const res = await t.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(forever) });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: 'Could not validate credentials' });
  });

  it('ends the sessions of a deactivated account at once, but not after a password change', async () => {
    const su = await t.user({ superuser: true });
    const u = await t.user();
    const other = await t.inject(login(u.email, TEST_PASSWORD));
    const change = await t.inject({
      method: 'POST', url: '/api/v1/users/me/password', headers: u.headers,
      payload: { current_password: TEST_PASSWORD, new_password: 'N3w-Password' },
    });
    expect(change.statusCode).toBe(204);
    expect((await t.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(other.json().access_token) })).statusCode).toBe(200);
    expect((await t.inject(login(u.email, 'N3w-Password'))).statusCode).toBe(200);
    expect((await t.inject(login(u.email, TEST_PASSWORD))).statusCode).toBe(401);

    const off = await t.inject({ method: 'PATCH', url: `/api/v1/admin/users/${u.id}`, headers: su.headers, payload: { is_active: false } });
    expect(off.statusCode).toBe(200);
    for (const token of [u.token, other.json().access_token]) {
      expect((await t.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) })).statusCode).toBe(401);
    }
  });
});

describe('own password change', () => {
  it('needs the current password (403 when missing or wrong) and the password rule (422)', async () => {
    const u = await t.user();
    const url = '/api/v1/users/me/password';
    const missing = await t.inject({ method: 'POST', url, headers: u.headers, payload: { new_password: 'N3w-Password' } });
    expect(missing.statusCode).toBe(403);
    const wrong = await t.inject({ method: 'POST', url, headers: u.headers, payload: { current_password: 'nope', new_password: 'N3w-Password' } });
    expect(wrong.statusCode).toBe(403);
    const weak = await t.inject({ method: 'POST', url, headers: u.headers, payload: { current_password: TEST_PASSWORD, new_password: 'alllowercase1' } });
    expect(weak.statusCode).toBe(422);
    expect(weak.json().detail[0]).toMatchObject({ type: 'value_error', loc: ['body', 'new_password'] });
    const tooLong = await t.inject({ method: 'POST', url, headers: u.headers, payload: { current_password: TEST_PASSWORD, new_password: `Aa1${'é'.repeat(35)}` } });
    expect(tooLong.statusCode).toBe(422);
    expect((await t.inject(login(u.email, TEST_PASSWORD))).statusCode).toBe(200);
    expect((await t.inject({ method: 'POST', url, payload: { new_password: 'N3w-Password' } })).statusCode).toBe(401);
  });

  it('does not exist under an identity provider: 404 before body validation', async () => {
    const idp = await t.spawn({ AUTH_PROVIDER: 'cognito' });
    const res = await idp.app.inject({ method: 'POST', url: '/api/v1/users/me/password', payload: { bad: true } });
    expect(res.statusCode).toBe(404);
  });
});

describe('lockout after failed sign-ins', () => {
  it('locks the email in any letter case after 10 failures in 15 minutes (423 with Retry-After)', async () => {
    const u = await t.user();
    for (let i = 0; i < 10; i++) {
      const email = i % 2 ? u.email.toUpperCase() : u.email;
      expect((await t.inject(i % 3 ? login(email, 'Wrong-1a') : form(email, 'Wrong-1a'))).statusCode).toBe(401);
    }
    const locked = await t.inject(login(u.email, TEST_PASSWORD));
    expect(locked.statusCode).toBe(423);
    const retryAfter = Number(locked.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expect((await t.inject(form(u.email.toUpperCase(), TEST_PASSWORD))).statusCode).toBe(423);
    // Another account is unaffected.
    const other = await t.user();
    expect((await t.inject(login(other.email, TEST_PASSWORD))).statusCode).toBe(200);
  });

  it('clears the count after a successful sign-in', async () => {
    const u = await t.user();
    for (let i = 0; i < 9; i++) await t.inject(login(u.email, 'Wrong-1a'));
    expect((await t.inject(login(u.email, TEST_PASSWORD))).statusCode).toBe(200);
    for (let i = 0; i < 9; i++) await t.inject(login(u.email, 'Wrong-1a'));
    expect((await t.inject(login(u.email, TEST_PASSWORD))).statusCode).toBe(200);
  });
});

describe('rate limits', () => {
  it('matches exact paths, then shared prefixes, then SDK prefixes, then the default', () => {
    const opts = { sdkPerMinute: 6000, fullProfile: true };
    expect(ruleFor('/api/v1/auth/token', opts)).toEqual({ bucket: '/api/v1/auth/token', limit: 10 });
    expect(ruleFor('/api/v1/auth/signup', opts).limit).toBe(5);
    expect(ruleFor('/api/v1/users/me/password', opts).limit).toBe(5);
    expect(ruleFor('/api/v1/auth/sso/login', opts).limit).toBe(30);
    expect(ruleFor('/api/v1/auth/sso/login', { ...opts, fullProfile: false }).limit).toBe(300);
    expect(ruleFor('/api/v1/export/variants', opts)).toEqual({ bucket: '/api/v1/export/', limit: 10, retryAfterSeconds: 60 });
    expect(ruleFor('/api/v1/audit-logs/export', opts).bucket).toBe('/api/v1/audit-logs/export');
    expect(ruleFor('/api/v1/ai/interpret/abc', opts).bucket).toBe('/api/v1/ai/interpret/');
    expect(ruleFor('/api/v1/ai/design', opts).limit).toBe(10);
    expect(ruleFor('/api/v1/tracking/assign/batch', opts).limit).toBe(60);
    expect(ruleFor('/api/v1/tracking/assign', opts).limit).toBe(6000);
    expect(ruleFor('/api/v1/feature-flags/user/u1', opts)).toEqual({ bucket: '/api/v1/feature-flags/user/u1', limit: 6000 });
    expect(ruleFor('/api/v1/sdk/ruleset', opts).limit).toBe(6000);
    expect(ruleFor('/api/v1/experiments/', opts)).toEqual({ bucket: '/api/v1/experiments/', limit: 300 });
  });

  it('answers 429 with Retry-After over a limit, per address and path, ids counted separately', async () => {
    const limited = await t.spawn({ RATE_LIMIT_ENABLED: 'true', SDK_RATE_LIMIT_PER_MINUTE: '3' });
    const inject = (url: string, ip = '10.0.0.1') => limited.app.inject({ method: 'GET', url, remoteAddress: ip });
    for (let i = 0; i < 3; i++) expect((await inject('/api/v1/feature-flags/user/a')).statusCode).not.toBe(429);
    const over = await inject('/api/v1/feature-flags/user/a');
    expect(over.statusCode).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect((await inject('/api/v1/feature-flags/user/b')).statusCode).not.toBe(429);
    expect((await inject('/api/v1/feature-flags/user/a', '10.0.0.2')).statusCode).not.toBe(429);

    const u = await t.user();
    for (let i = 0; i < 10; i++) {
      const res = await limited.app.inject({ ...login(u.email, TEST_PASSWORD), remoteAddress: '10.0.0.3' });
      expect(res.statusCode).toBe(200);
    }
    const eleventh = await limited.app.inject({ ...login(u.email, TEST_PASSWORD), remoteAddress: '10.0.0.3' });
    expect(eleventh.statusCode).toBe(429);
    expect(eleventh.json()).toEqual({ detail: 'Rate limit exceeded' });

    for (let i = 0; i < 10; i++) await inject(i % 2 ? '/api/v1/export/experiments' : '/api/v1/export/variants', '10.0.0.4');
    const exportOver = await inject('/api/v1/export/feature-flags', '10.0.0.4');
    expect(exportOver.statusCode).toBe(429);
    expect(exportOver.headers['retry-after']).toBe('60');
  });

  it('trusts X-Forwarded-For only when TRUSTED_PROXIES says so', async () => {
    const untrusted = await t.spawn({ RATE_LIMIT_ENABLED: 'true', SDK_RATE_LIMIT_PER_MINUTE: '2' });
    const trusted = await t.spawn({ RATE_LIMIT_ENABLED: 'true', SDK_RATE_LIMIT_PER_MINUTE: '2', TRUSTED_PROXIES: '10.9.9.9' });
    const hit = (app: typeof untrusted, n: number) =>
      app.app.inject({ method: 'GET', url: '/api/v1/sdk/xff', remoteAddress: '10.9.9.9', headers: { 'x-forwarded-for': `192.0.2.${n}` } });
    const untrustedCodes = [await hit(untrusted, 1), await hit(untrusted, 2), await hit(untrusted, 3)].map((r) => r.statusCode);
    expect(untrustedCodes[2]).toBe(429);
    const trustedCodes = [await hit(trusted, 1), await hit(trusted, 2), await hit(trusted, 3)].map((r) => r.statusCode);
    expect(trustedCodes).not.toContain(429);
  });

  it.runIf(Boolean(process.env.TEST_REDIS_URL))('shares counts across processes through Redis', async () => {
    const a = await t.spawn({ RATE_LIMIT_ENABLED: 'true', SDK_RATE_LIMIT_PER_MINUTE: '4' });
    const b = await t.spawn({ RATE_LIMIT_ENABLED: 'true', SDK_RATE_LIMIT_PER_MINUTE: '4' });
    const url = `/api/v1/sdk/shared-${t.unique()}`;
    const codes: number[] = [];
    for (const app of [a, b, a, b, a]) codes.push((await app.app.inject({ method: 'GET', url, remoteAddress: '10.1.1.1' })).statusCode);
    expect(codes.slice(0, 4)).not.toContain(429);
    expect(codes[4]).toBe(429);
  });

  it('RATE_LIMIT_ENABLED=false switches every limit off', async () => {
    const u = await t.user();
    for (let i = 0; i < 12; i++) expect((await t.inject(login(u.email, TEST_PASSWORD))).statusCode).toBe(200);
  });
});
