import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPIRY_NOT_IN_FUTURE, LAST_USED_WRITE_INTERVAL_MS } from '../../src/modules/api-keys/service.js';
import { fixedClock } from '../../src/platform/clock.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

const clock = fixedClock(new Date('2026-07-01T12:00:00.000Z'));
let t: TestApp;

beforeAll(async () => {
  t = await testApp({ clock });
});
afterAll(() => t.close());

const create = (user: TestUser, payload: Record<string, unknown>) =>
  t.inject({ method: 'POST', url: '/api/v1/api-keys', headers: user.headers, payload: { name: 'k', scopes: ['sdk:ruleset'], ...payload } });
const listed = async (user: TestUser, id: string) =>
  ((await t.inject({ method: 'GET', url: '/api/v1/api-keys', headers: user.headers })).json() as Array<Record<string, unknown>>).find((k) => k.id === id)!;
const use = (key: string) => t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: { 'x-api-key': key } });
const at = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();

describe('API key expiry', () => {
  it('takes an optional expires_at in the future and shows it on create and in the list', async () => {
    const user = await t.user();
    const expiresAt = at(86_400_000);
    const res = await create(user, { expires_at: expiresAt });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ expires_at: expiresAt, last_used_at: null });
    expect(await listed(user, res.json().id)).toMatchObject({ expires_at: expiresAt, last_used_at: null });
    const forever = await create(user, {});
    expect(forever.json().expires_at).toBeNull();
  });

  it('refuses an expiry that is not in the future (422 at body.expires_at)', async () => {
    const user = await t.user();
    for (const expiresAt of [at(0), at(-1000)]) {
      const res = await create(user, { expires_at: expiresAt });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({ detail: [{ type: 'value_error', loc: ['body', 'expires_at'], msg: EXPIRY_NOT_IN_FUTURE }] });
    }
    const bad = await create(user, { expires_at: 'tomorrow' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'expires_at']);
    expect(bad.body).not.toContain('tomorrow');
  });

  it('an expired key is 401 on every route that takes a key', async () => {
    const user = await t.user({ role: 'DEVELOPER' });
    const { key } = (await create(user, { expires_at: at(60_000) })).json();
    expect((await use(key)).statusCode).toBe(200);
    clock.advance(60_000);
    const routes = [
      { method: 'GET' as const, url: '/api/v1/sdk/ruleset' },
      { method: 'GET' as const, url: '/api/v1/feature-flags/user/u1' },
      { method: 'POST' as const, url: '/api/v1/tracking/track', payload: { user_id: 'u1', event_type: 'e' } },
    ];
    for (const route of routes) {
      const res = await t.inject({ ...route, headers: { 'x-api-key': key } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ detail: 'Invalid or missing API key' });
    }
  });
});

describe('API key last use', () => {
  it('is written at most once a minute per key, without the request waiting for it', async () => {
    const user = await t.user();
    const { id, key } = (await create(user, {})).json();
    const first = clock.now().toISOString();
    expect((await use(key)).statusCode).toBe(200);
    await t.services.apiKeys.settled();
    expect((await listed(user, id)).last_used_at).toBe(first);

    clock.advance(LAST_USED_WRITE_INTERVAL_MS - 1000);
    expect((await use(key)).statusCode).toBe(200);
    await t.services.apiKeys.settled();
    expect((await listed(user, id)).last_used_at).toBe(first);

    clock.advance(1000);
    const second = clock.now().toISOString();
    expect((await use(key)).statusCode).toBe(200);
    await t.services.apiKeys.settled();
    expect((await listed(user, id)).last_used_at).toBe(second);
  });
});
