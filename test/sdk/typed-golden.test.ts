import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import vectors from '../vectors/typed-flags.json' with { type: 'json' };
import { splitBucket, SPLIT_BUCKETING } from '../../src/targeting/index.js';
import { testApp, type TestApp } from '../helpers/test-app.js';

// The golden typed-flag evaluations (also run by sdk/test/typed-golden.test.ts against @uplift/sdk): flags and the
// segment made through the API, answers read from the evaluate route.
let t: TestApp;
let key: Record<string, string>;
const ids = new Map<string, string>();
const withIds = <T>(value: T): T => {
  let text = JSON.stringify(value);
  for (const [placeholder, id] of ids) text = text.split(placeholder).join(id);
  return JSON.parse(text) as T;
};

beforeAll(async () => {
  t = await testApp();
  const dev = await t.user({ role: 'DEVELOPER' });
  key = (await t.apiKey(dev, ['sdk:ruleset'])).headers;
  for (const s of vectors.segments) {
    const res = await t.inject({ method: 'POST', url: '/api/v1/segments', headers: dev.headers, payload: { name: s.name, rules: s.rules } });
    expect(res.statusCode).toBe(201);
    ids.set(s.id, res.json().id);
  }
  for (const f of vectors.flags) {
    const { status, targeting_rules, default_variation, off_variation, variation_rules, variation_split, ...rest } = withIds(f);
    const payload = {
      ...rest, name: f.key, is_active: status !== 'inactive',
      ...(targeting_rules && { targeting_rules }), ...(default_variation && { default_variation }), ...(off_variation && { off_variation }),
      ...(variation_rules && { variation_rules }), ...(variation_split && { variation_split }),
    };
    const res = await t.inject({ method: 'POST', url: '/api/v1/feature-flags', headers: dev.headers, payload });
    expect(res.statusCode, res.body).toBe(201);
    if (status === 'archived') {
      const archived = await t.inject({ method: 'POST', url: '/api/v1/feature-flags/bulk-toggle', headers: dev.headers, payload: { ids: [res.json().id], action: 'archive' } });
      expect(archived.json().results[0].success).toBe(true);
    }
  }
});
afterAll(() => t.close());

describe('golden typed-flag vectors on the service', () => {
  it('hashes splits with the split bucketing the vectors were made with', async () => {
    expect(SPLIT_BUCKETING).toEqual(vectors.split_bucketing);
    expect((await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: key })).json().split_bucketing).toEqual(vectors.split_bucketing);
    for (const v of vectors.split_buckets) expect(splitBucket(v.flag_key, v.user_id), `${v.flag_key} ${v.user_id}`).toBe(v.bucket);
  });

  it.each(vectors.cases.map((c) => [c.flag_key, c.user_id, c] as const))('evaluate %s for %s', async (flagKey, userId, c) => {
    const res = await t.inject({ method: 'POST', url: `/api/v1/feature-flags/evaluate/${flagKey}`, headers: key, payload: { user_id: userId, context: c.context } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ flag_key: flagKey, ...c.expected });
  });
});
