import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import vectors from '../vectors/flags.json' with { type: 'json' };
import { testApp, type TestApp } from '../helpers/test-app.js';

// The golden flag evaluations (also run by sdk/test/golden.test.ts against @uplift/sdk): flags and segments made
// through the API, answers read from the evaluate and user routes.
let t: TestApp;
let key: Record<string, string>;
/** Placeholder segment id in the vectors -> the id the API gave. */
const ids = new Map<string, string>();
const withIds = <T>(value: T): T => {
  let text = JSON.stringify(value);
  for (const [placeholder, id] of ids) text = text.split(placeholder).join(id);
  return JSON.parse(text) as T;
};

beforeAll(async () => {
  t = await testApp();
  const dev = await t.user({ role: 'DEVELOPER' });
  key = (await t.apiKey(dev)).headers;
  for (const s of vectors.segments) {
    const res = await t.inject({ method: 'POST', url: '/api/v1/segments', headers: dev.headers, payload: { name: s.name, rules: s.rules } });
    expect(res.statusCode).toBe(201);
    ids.set(s.id, res.json().id);
  }
  for (const f of vectors.flags) {
    const payload = { key: f.key, name: f.key, is_active: f.status !== 'inactive', rollout_percentage: f.rollout_percentage, ...(f.targeting_rules && { targeting_rules: withIds(f.targeting_rules) }) };
    const res = await t.inject({ method: 'POST', url: '/api/v1/feature-flags', headers: dev.headers, payload });
    expect(res.statusCode, res.body).toBe(201);
    if (f.status === 'archived') {
      const archived = await t.inject({ method: 'POST', url: '/api/v1/feature-flags/bulk-toggle', headers: dev.headers, payload: { ids: [res.json().id], action: 'archive' } });
      expect(archived.json().results[0].success).toBe(true);
    }
  }
});
afterAll(() => t.close());

describe('golden flag vectors on the service', () => {
  it('uses the bucketing the vectors were made with', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: (await t.apiKey(await t.user({ role: 'DEVELOPER' }), ['sdk:ruleset'])).headers });
    expect(res.json().bucketing).toEqual(vectors.bucketing);
  });

  it.each(vectors.cases.map((c) => [c.flag_key, c.user_id, c] as const))('evaluate %s for %s', async (flagKey, userId, c) => {
    const res = await t.inject({ method: 'POST', url: `/api/v1/feature-flags/evaluate/${flagKey}`, headers: key, payload: { user_id: userId, context: c.context } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(withIds({ flag_key: flagKey, ...c.expected }));
  });

  it.each(vectors.users.map((u) => [u.user_id, u] as const))('user route for %s', async (userId, u) => {
    const context = encodeURIComponent(JSON.stringify(u.context));
    const res = await t.inject({ method: 'GET', url: `/api/v1/feature-flags/user/${userId}?context=${context}`, headers: key });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(u.expected);
  });
});
