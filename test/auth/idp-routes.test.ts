import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as provider from '../../src/modules/auth/idp/provider.js';
import { CODE_SENT, CONFIRMED, PASSWORD_SET } from '../../src/modules/auth/idp/routes.js';
import { COULD_NOT_VALIDATE } from '../../src/platform/errors.js';
import { testApp, type TestApp } from '../helpers/test-app.js';
import type { FakeIdp } from './fake-idp.js';
import { bearer, usersMe, startIdpApp, stopIdpApp } from './helpers.js';

let idp: FakeIdp;
let t: TestApp;
let local: TestApp;
beforeAll(async () => {
  ({ idp, t } = await startIdpApp({ IDP_SELF_SIGNUP_ENABLED: 'Yes' }));
});
afterAll(async () => {
  await local?.close();
  await stopIdpApp({ idp, t });
});

const post = (url: string, payload: Record<string, unknown>, app = t.app) => app.inject({ method: 'POST', url: `/api/v1/auth/${url}`, payload });
const form = (username: string, password: string) =>
  t.inject({
    method: 'POST',
    url: '/api/v1/auth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ username, password }).toString(),
  });
const person = (extra: Partial<Parameters<FakeIdp['addUser']>[0]> = {}) => {
  const username = t.unique('p');
  return idp.addUser({ username, attributes: { email: `${username}@example.com`, given_name: 'Pat' }, ...extra });
};
const PROVIDER_ROUTES = ['signup', 'confirm', 'forgot-password', 'reset-password', 'refresh'];

describe('sign-in through the identity provider', () => {
  it("answers the provider's access token on /auth/token, creates the account and records last_login", async () => {
    const u = person();
    const res = await form(u.username, u.password);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    expect(body.refresh_token).toEqual(expect.any(String));
    const sub = JSON.parse(Buffer.from(body.access_token.split('.')[1], 'base64url').toString()).sub;
    expect(sub).toBe(u.sub);
    const account = (await usersMe(t, body.access_token)).json();
    expect(account).toMatchObject({ username: u.username, external_id: `idp:${u.sub}` });
    expect(account.last_login).not.toBeNull();
  });

  it('signs in on /auth/login with the username in the email field', async () => {
    const u = person();
    const res = await post('login', { email: u.username, password: u.password });
    expect(res.statusCode).toBe(200);
    expect((await usersMe(t, res.json().access_token)).statusCode).toBe(200);
  });

  it('answers 401 to a wrong password, an unknown user and an unconfirmed account', async () => {
    const u = person();
    expect((await form(u.username, 'wrong')).json()).toEqual({ detail: provider.SIGN_IN_FAILED });
    expect((await form('nobody-here', 'x')).statusCode).toBe(401);
    const pending = person({ status: 'UNCONFIRMED' });
    const res = await form(pending.username, pending.password);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: provider.NOT_CONFIRMED });
  });

  it('answers 401 saying a new password must be set first to a temporary password', async () => {
    const u = person({ status: 'FORCE_CHANGE_PASSWORD' });
    const res = await form(u.username, u.password);
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toMatch(/new password must be set first/);
  });

  it('refuses the sign-in (401) when the account cannot be linked', async () => {
    const u = person({ attributes: {} });
    const res = await form(u.username, u.password);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: COULD_NOT_VALIDATE });
  });

  it('refreshes with the refresh token from sign-in, answering like /auth/token', async () => {
    const u = person();
    const { refresh_token } = (await form(u.username, u.password)).json();
    const res = await post('refresh', { refresh_token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ access_token: expect.any(String), token_type: 'bearer', expires_in: 3600 });
    expect((await usersMe(t, res.json().access_token)).statusCode).toBe(200);
    const bad = await post('refresh', { refresh_token: 'not-a-refresh-token' });
    expect(bad.statusCode).toBe(401);
    expect(bad.json()).toEqual({ detail: provider.REFRESH_FAILED });
    expect((await post('refresh', {})).statusCode).toBe(422);
  });

  it("answers GET /auth/me with the provider's record, and keeps GET /users/me for the account", async () => {
    const u = person({ attributes: { email: 'me@example.com', given_name: 'Mia', family_name: 'Ng', custom_team: 'red' } });
    const res = await t.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(idp.token(u)) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      username: u.username,
      attributes: { sub: u.sub, email: 'me@example.com', email_verified: 'true', given_name: 'Mia', family_name: 'Ng', custom_team: 'red' },
    });
    expect((await t.inject({ method: 'GET', url: '/api/v1/auth/me' })).statusCode).toBe(401);
  });

  it('has no local password route: POST /users/me/password is 404 before body validation', async () => {
    const u = person();
    const res = await t.inject({ method: 'POST', url: '/api/v1/users/me/password', headers: bearer(idp.token(u)), payload: {} });
    expect(res.statusCode).toBe(404);
  });
});

describe('the provider routes', () => {
  it('signs up (201), confirms with the code (200), then signs in', async () => {
    const username = t.unique('su');
    const res = await post('signup', { username, email: `${username}@example.com`, password: 'Sup3r-Secret', given_name: 'Sam', family_name: 'Up' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      user_sub: idp.users.get(username)!.sub,
      user_confirmed: false,
      code_delivery: { destination: 'u***@e***', medium: 'EMAIL', attribute: 'email' },
    });
    expect(idp.users.get(username)!.attributes).toMatchObject({ email: `${username}@example.com`, given_name: 'Sam', family_name: 'Up' });
    expect((await post('confirm', { username, confirmation_code: '000000' })).json()).toEqual({ detail: provider.BAD_CODE });
    const ok = await post('confirm', { username, confirmation_code: '123456' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ message: CONFIRMED });
    const again = await post('confirm', { username, confirmation_code: '123456' });
    expect(again.statusCode).toBe(400);
    const signIn = await form(username, 'Sup3r-Secret');
    expect(signIn.statusCode).toBe(200);
    expect((await usersMe(t, signIn.json().access_token)).json()).toMatchObject({ username, full_name: 'Sam Up' });
  });

  it('answers 409 to a username the provider already has, and 422 to a malformed body', async () => {
    const u = person();
    const res = await post('signup', { username: u.username, email: 'x@example.com', password: 'Sup3r-Secret' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: provider.USERNAME_EXISTS });
    expect((await post('signup', { username: 'a b', email: 'x@example.com', password: 'p' })).statusCode).toBe(422);
    expect((await post('signup', { username: 'ab', email: 'not-an-email', password: 'p' })).statusCode).toBe(422);
    expect((await post('signup', { username: 'ab', email: 'x@example.com', password: 'p', extra: 1 })).statusCode).toBe(422);
  });

  it('resets a forgotten password with the code sent', async () => {
    const u = person();
    const sent = await post('forgot-password', { username: u.username });
    expect(sent.statusCode).toBe(200);
    expect(sent.json()).toEqual({ message: CODE_SENT, code_delivery: null });
    const bad = await post('reset-password', { username: u.username, confirmation_code: '111111', new_password: 'N3w-Password' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ detail: provider.BAD_CODE });
    const ok = await post('reset-password', { username: u.username, confirmation_code: '654321', new_password: 'N3w-Password' });
    expect(ok.json()).toEqual({ message: PASSWORD_SET });
    expect((await form(u.username, 'N3w-Password')).statusCode).toBe(200);
  });

  it('answers forgot-password alike whether or not the account exists, after the same provider call', async () => {
    const answers: Array<{ status: number; body: string; calls: number }> = [];
    const ask = async (username: string, failure?: Parameters<FakeIdp['failNext']>[1]) => {
      if (failure) idp.failNext('ForgotPassword', failure);
      const before = idp.callsOf('ForgotPassword').length;
      const res = await post('forgot-password', { username });
      answers.push({ status: res.statusCode, body: res.body, calls: idp.callsOf('ForgotPassword').length - before });
    };
    await ask(person().username);
    await ask('no-such-user');
    // What only an existing account gets from the provider: a state that cannot be reset, no verified email, its own
    // attempt limit, a trigger's refusal, a code that could not be delivered.
    for (const type of ['NotAuthorizedException', 'InvalidParameterException', 'LimitExceededException', 'UserLambdaValidationException', 'CodeDeliveryFailureException']) {
      await ask(person().username, { type, message: 'User password cannot be reset in the current state.' });
    }
    expect(answers).toEqual(Array(answers.length).fill({ status: 200, body: JSON.stringify({ message: CODE_SENT, code_delivery: null }), calls: 1 }));
    const reset = await post('reset-password', { username: 'no-such-user', confirmation_code: '1', new_password: 'N3w-Password' });
    expect(reset.json()).toEqual({ detail: provider.BAD_CODE });
  });
});

describe('provider errors', () => {
  const cases: Array<{ action: string; route: string; body: Record<string, unknown>; failure: Parameters<FakeIdp['failNext']>[1]; status: number; detail: string }> = [
    { action: 'ConfirmSignUp', route: 'confirm', body: { username: 'x', confirmation_code: '1' }, failure: { type: 'ExpiredCodeException' }, status: 400, detail: provider.EXPIRED_CODE },
    { action: 'SignUp', route: 'signup', body: { username: 'x', email: 'x@example.com', password: 'p' }, failure: { type: 'AliasExistsException' }, status: 409, detail: provider.ALIAS_EXISTS },
    {
      action: 'SignUp', route: 'signup', body: { username: 'x', email: 'x@example.com', password: 'p' },
      failure: { type: 'InvalidPasswordException', message: 'Password did not conform with policy: Password not long enough' },
      status: 400, detail: `${provider.WEAK_PASSWORD}: Password not long enough`,
    },
    {
      action: 'SignUp', route: 'signup', body: { username: 'x', email: 'x@example.com', password: 'p' },
      failure: { type: 'UserLambdaValidationException', message: 'PreSignUp failed with error arn:aws:lambda:us-east-1:123:function:secret.' },
      status: 400, detail: provider.SIGNUP_REFUSED,
    },
    {
      action: 'InitiateAuth', route: 'login', body: { email: 'x', password: 'p' },
      failure: { type: 'InvalidParameterException', message: 'USER_PASSWORD_AUTH flow not enabled for this client' },
      status: 400, detail: provider.INVALID_REQUEST,
    },
    { action: 'ConfirmForgotPassword', route: 'reset-password', body: { username: 'x', confirmation_code: '1', new_password: 'p' }, failure: { type: 'LimitExceededException' }, status: 429, detail: provider.TOO_MANY_ATTEMPTS },
    { action: 'ConfirmForgotPassword', route: 'reset-password', body: { username: 'x', confirmation_code: '1', new_password: 'p' }, failure: { type: 'PasswordHistoryPolicyViolationException' }, status: 400, detail: provider.REUSED_PASSWORD },
    { action: 'SignUp', route: 'signup', body: { username: 'x', email: 'x@example.com', password: 'p' }, failure: { type: 'CodeDeliveryFailureException' }, status: 503, detail: provider.CODE_DELIVERY_FAILED },
    // Throttling of the whole client does not depend on the account: forgot-password shows it too.
    { action: 'ForgotPassword', route: 'forgot-password', body: { username: 'x' }, failure: { type: 'TooManyRequestsException' }, status: 429, detail: provider.THROTTLED },
    {
      action: 'InitiateAuth', route: 'login', body: { email: 'x', password: 'p' },
      failure: { type: 'InternalErrorException', message: 'internal failure in pool us-east-1_TestPool1' }, status: 503, detail: provider.PROVIDER_FAILED,
    },
    { action: 'InitiateAuth', route: 'refresh', body: { refresh_token: 'r' }, failure: { type: 'ResourceNotFoundException', message: 'User pool client abc does not exist.' }, status: 503, detail: provider.PROVIDER_FAILED },
    { action: 'InitiateAuth', route: 'login', body: { email: 'x', password: 'p' }, failure: { type: 'PasswordResetRequiredException' }, status: 401, detail: provider.PASSWORD_RESET_REQUIRED },
    // NotAuthorizedException is a wrong password only when signing in; elsewhere the pool forbids the action, and
    // its message (which may name the user) is not shown.
    {
      action: 'SignUp', route: 'signup', body: { username: 'x', email: 'x@example.com', password: 'p' },
      failure: { type: 'NotAuthorizedException', message: 'SignUp is not permitted for this user pool' }, status: 403, detail: provider.SIGNUP_NOT_ALLOWED,
    },
    {
      action: 'ConfirmForgotPassword', route: 'reset-password', body: { username: 'x', confirmation_code: '1', new_password: 'p' },
      failure: { type: 'NotAuthorizedException', message: 'User password cannot be reset in the current state.' }, status: 400, detail: provider.RESET_NOT_ALLOWED,
    },
    {
      action: 'ConfirmForgotPassword', route: 'reset-password', body: { username: 'x', confirmation_code: '1', new_password: 'p' },
      failure: { type: 'UserNotConfirmedException', message: 'User is not confirmed.' }, status: 401, detail: provider.NOT_CONFIRMED,
    },
    {
      action: 'InitiateAuth', route: 'login', body: { email: 'x', password: 'p' },
      failure: { type: 'NotAuthorizedException', message: 'Incorrect username or password.' }, status: 401, detail: provider.SIGN_IN_FAILED,
    },
  ];

  it.each(cases)('$failure.type on $route is $status, a status the route declares', async ({ action, route, body, failure, status, detail }) => {
    idp.failNext(action, failure);
    const res = await post(route, body);
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ detail });
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths[`/api/v1/auth/${route}`].post.responses)).toContain(String(status));
  });

  it('answers 429 with Retry-After when the provider throttles, using its Retry-After when it sends one', async () => {
    idp.failNext('InitiateAuth', { type: 'TooManyRequestsException', message: 'Rate exceeded' });
    const res = await post('login', { email: 'x', password: 'p' });
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({ detail: provider.THROTTLED });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    idp.failNext('SignUp', { type: 'TooManyRequestsException', headers: { 'retry-after': '42' } });
    const signup = await post('signup', { username: 'x', email: 'x@example.com', password: 'p' });
    expect(signup.statusCode).toBe(429);
    expect(signup.headers['retry-after']).toBe('42');
  });

  it('answers 503 with Retry-After when the provider is unreachable', async () => {
    const down = await t.spawn(idp.env({ IDP_ENDPOINT: 'http://127.0.0.1:1', IDP_SELF_SIGNUP_ENABLED: 'true' }));
    for (const [route, body] of [
      ['login', { email: 'x', password: 'p' }],
      ['signup', { username: 'x', email: 'x@example.com', password: 'p' }],
      ['forgot-password', { username: 'x' }],
    ] as const) {
      const res = await post(route, body, down.app);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ detail: provider.UNREACHABLE });
      expect(res.headers['retry-after']).toBeDefined();
    }
    // A new subject's first request needs the provider record: 503 too, never 401 or 500.
    const u = person();
    const first = await down.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(idp.token(u)) });
    expect(first.statusCode).toBe(503);
  });
});

describe('which provider routes exist', () => {
  it('has signup and confirm only with IDP_SELF_SIGNUP_ENABLED; the other three always in this mode', async () => {
    const noSignup = await t.spawn(idp.env());
    for (const route of ['signup', 'confirm']) expect((await post(route, {}, noSignup.app)).statusCode).toBe(404);
    for (const route of ['forgot-password', 'reset-password', 'refresh']) expect((await post(route, {}, noSignup.app)).statusCode).toBe(422);
  });

  it('answers 404 to all five under the local provider, which keeps its own sign-in', async () => {
    local = await testApp({ env: { IDP_SELF_SIGNUP_ENABLED: 'true', IDP_USER_POOL_ID: 'us-east-1_TestPool1', IDP_CLIENT_ID: 'c' } });
    for (const route of PROVIDER_ROUTES) expect((await post(route, {}, local.app)).statusCode).toBe(404);
    const u = await local.user();
    const me = await local.inject({ method: 'GET', url: '/api/v1/auth/me', headers: u.headers });
    expect(me.json()).toMatchObject({ id: u.id, email: u.email });
  });
});
