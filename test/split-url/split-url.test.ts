import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Unprocessable } from '../../src/platform/errors.js';
import { SPLIT_URL_NOT_AVAILABLE } from '../../src/modules/experiments/service.js';
import {
  ALLOCATIONS_MUST_SUM,
  NOT_FINITE,
  URL_VARIANT_NAMES_UNIQUE,
  normaliseSplitUrlConfig,
  readStoredSplitUrlConfig,
  splitUrlConfigIssues,
} from '../../src/modules/split-url/config.js';
import { pickByAllocation, previewBucket } from '../../src/modules/split-url/pick.js';
import { NO_SPLIT_URL_CONFIG, NOT_SPLIT_URL, STORED_CONFIG_INVALID } from '../../src/modules/split-url/service.js';
import { murmur3_32_string } from '../../src/targeting/index.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

const LOC = ['body', 'split_url_config'];
const variants = (...allocations: number[]) => allocations.map((a, i) => ({ name: `v${i}`, url: `https://shop.example/${i}`, traffic_allocation: a }));

describe('split_url_config validation and normalisation', () => {
  it('fills the defaults and keeps what was given', () => {
    expect(normaliseSplitUrlConfig({ variants: variants(50, 50) }, LOC)).toEqual({
      variants: variants(50, 50),
      cookie_name: null,
      cookie_ttl_days: 30,
      canonical_url: null,
    });
    const full = { variants: variants(20, 30, 50), cookie_name: 'ab_home', cookie_ttl_days: 7, canonical_url: 'https://shop.example/' };
    expect(normaliseSplitUrlConfig(full, LOC)).toEqual(full);
    expect(normaliseSplitUrlConfig({ variants: variants(50, 50), cookie_name: null, canonical_url: null }, LOC).cookie_name).toBeNull();
  });

  it('accepts a sum within 0.01 of 100 and refuses one beyond', () => {
    expect(splitUrlConfigIssues({ variants: variants(33.33, 33.33, 33.33) }, LOC)).toEqual([]);
    expect(splitUrlConfigIssues({ variants: variants(50.01, 50) }, LOC)).toEqual([]);
    for (const allocations of [[50.02, 50], [49.98, 50], [40, 40], [0, 0], [100, 100]]) {
      expect(splitUrlConfigIssues({ variants: variants(...allocations) }, LOC)).toEqual([
        { type: 'value_error', loc: [...LOC, 'variants'], msg: ALLOCATIONS_MUST_SUM },
      ]);
    }
  });

  it('refuses allocations outside 0 to 100, NaN and infinities, fewer than 2 variants, duplicates, unknown fields', () => {
    const first = (value: unknown) => splitUrlConfigIssues(value, LOC)[0];
    expect(first({ variants: variants(-1, 101) })).toMatchObject({ type: 'greater_than_equal', loc: [...LOC, 'variants', 0, 'traffic_allocation'] });
    expect(splitUrlConfigIssues({ variants: variants(-1, 101) }, LOC)[1]).toMatchObject({ type: 'less_than_equal', loc: [...LOC, 'variants', 1, 'traffic_allocation'] });
    for (const bad of [NaN, Infinity, -Infinity]) {
      expect(splitUrlConfigIssues({ variants: variants(bad, 50) }, LOC)).toContainEqual({ type: 'finite_number', loc: [...LOC, 'variants', 0, 'traffic_allocation'], msg: NOT_FINITE });
    }
    expect(first({ variants: variants(100) })).toMatchObject({ type: 'too_short', loc: [...LOC, 'variants'] });
    expect(first({ variants: [] })).toMatchObject({ type: 'too_short' });
    expect(first({})).toMatchObject({ type: 'missing', loc: [...LOC, 'variants'] });
    expect(first({ variants: variants(50, 50), weights: [] })).toMatchObject({ type: 'extra_forbidden', loc: [...LOC, 'weights'] });
    expect(first({ variants: [{ name: 'a', url: 'x', traffic_allocation: '50' }, { name: 'b', url: 'y', traffic_allocation: 50 }] }))
      .toMatchObject({ type: 'float_parsing', loc: [...LOC, 'variants', 0, 'traffic_allocation'] });
    expect(first({ variants: [{ name: 'a', traffic_allocation: 50 }, { name: 'b', url: 'y', traffic_allocation: 50 }] }))
      .toMatchObject({ type: 'missing', loc: [...LOC, 'variants', 0, 'url'] });
    expect(first({ variants: [{ name: 'a', url: 'x', traffic_allocation: 50 }, { name: 'a', url: 'y', traffic_allocation: 50 }] }))
      .toEqual({ type: 'value_error', loc: [...LOC, 'variants'], msg: URL_VARIANT_NAMES_UNIQUE });
    expect(first({ variants: variants(50, 50), cookie_ttl_days: 1.5 })).toMatchObject({ loc: [...LOC, 'cookie_ttl_days'] });
    expect(first({ variants: variants(50, 50), cookie_name: 'has space' })).toMatchObject({ type: 'string_pattern_mismatch' });
    expect(first(null)).toMatchObject({ loc: LOC });
    expect(() => normaliseSplitUrlConfig({ variants: variants(10, 10) }, LOC)).toThrow(Unprocessable);
  });

  it('never throws on any JSON value and never mutates it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = structuredClone(value);
        const issues = splitUrlConfigIssues(value, LOC);
        expect(value).toEqual(copy);
        expect(readStoredSplitUrlConfig(value) === undefined).toBe(issues.length > 0);
      }),
    );
  });
});

describe('preview bucketing', () => {
  it('hashes exactly {user_id}:{experiment_id}', () => {
    const bucket = previewBucket('user-42', 'exp-7');
    expect(bucket).toBe(Math.floor((murmur3_32_string('user-42:exp-7') * 10_000) / 2 ** 32));
  });

  it('picks a variant with a share, never a 0 % one, deterministically', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 2, maxLength: 6 }), fc.integer({ min: 0, max: 9_999 }), (raw, bucket) => {
        fc.pre(raw.some((r) => r > 0));
        const total = raw.reduce((a, b) => a + b, 0);
        const allocations = raw.map((r) => (r / total) * 100);
        const picked = pickByAllocation(variants(...allocations), bucket);
        expect(picked.traffic_allocation).toBeGreaterThan(0);
        expect(pickByAllocation(variants(...allocations), bucket)).toEqual(picked);
      }),
    );
  });

  it('follows the allocations across many users', () => {
    const config = variants(20, 30, 50);
    const counts = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) {
      const name = pickByAllocation(config, previewBucket(`user-${i}`, 'd9b1f6c2-4b8e-4a57-9a61-3f0a2b1c9d10')).name;
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    expect(counts.get('v0')! / 20_000).toBeCloseTo(0.2, 1);
    expect(counts.get('v1')! / 20_000).toBeCloseTo(0.3, 1);
    expect(counts.get('v2')! / 20_000).toBeCloseTo(0.5, 1);
  });
});

describe('GET /api/v1/experiments/{experiment_id}/split-url/preview', () => {
  let t: TestApp;
  let dev: TestUser;
  beforeAll(async () => {
    t = await testApp();
    dev = await t.user({ role: 'DEVELOPER' });
  });
  afterAll(() => t.close());

  async function experiment(type: string, splitUrlConfig?: unknown): Promise<string> {
    const res = await t.inject({
      method: 'POST', url: '/api/v1/experiments/', headers: dev.headers,
      payload: {
        name: 'Landing page', key: t.unique('exp'), experiment_type: type,
        variants: [{ name: 'control', is_control: true, traffic_allocation: 50 }, { name: 'b', traffic_allocation: 50 }],
        metrics: [{ name: 'Signup', event_name: 'signup', is_primary: true }],
        ...(splitUrlConfig === undefined ? {} : { split_url_config: splitUrlConfig }),
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id;
  }
  const preview = (id: string, query: string, headers: Record<string, string> = dev.headers) =>
    t.inject({ method: 'GET', url: `/api/v1/experiments/${id}/split-url/preview${query}`, headers });

  it('normalises split_url_config on create and update in the full profile, refusing bad allocations', async () => {
    const id = await experiment('split_url', { variants: [{ name: 'a', url: '/a', traffic_allocation: 50 }, { name: 'b', url: '/b', traffic_allocation: 50 }] });
    const stored = (await t.inject({ method: 'GET', url: `/api/v1/experiments/${id}`, headers: dev.headers })).json().split_url_config;
    expect(stored).toMatchObject({ cookie_name: null, canonical_url: null, cookie_ttl_days: 30 });
    const bad = await t.inject({
      method: 'POST', url: '/api/v1/experiments/', headers: dev.headers,
      payload: {
        name: 'Bad', key: t.unique('bad'), experiment_type: 'split_url',
        variants: [{ name: 'control', is_control: true, traffic_allocation: 100 }],
        metrics: [{ name: 'Signup', event_name: 'signup' }],
        split_url_config: { variants: [{ name: 'a', url: '/a', traffic_allocation: 70 }, { name: 'b', url: '/b', traffic_allocation: 20 }] },
      },
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc.slice(0, 2)).toEqual(['body', 'split_url_config']);
    const update = await t.inject({
      method: 'PUT', url: `/api/v1/experiments/${id}`, headers: dev.headers,
      payload: { split_url_config: { variants: [{ name: 'a', url: '/a', traffic_allocation: 101 }, { name: 'b', url: '/b', traffic_allocation: -1 }] } },
    });
    expect(update.statusCode).toBe(422);
  });

  it('answers the variant the user hashes to', async () => {
    const config = { variants: variants(25, 25, 50) };
    const id = await experiment('split_url', config);
    const res = await preview(id, '?user_id=alice');
    expect(res.statusCode).toBe(200);
    const expected = pickByAllocation(variants(25, 25, 50), previewBucket('alice', id));
    expect(res.json()).toEqual({ experiment_id: id, user_id: 'alice', variant_name: expected.name, url: expected.url, traffic_allocation: expected.traffic_allocation });
    expect((await preview(id, '?user_id=alice')).json()).toEqual(res.json());
    const admin = await t.user({ role: 'ADMIN' });
    expect((await preview(id, '?user_id=bob', admin.headers)).statusCode).toBe(200);
    const root = await t.user({ superuser: true });
    expect((await preview(id, '?user_id=bob', root.headers)).statusCode).toBe(200);
  });

  it('400 for an experiment of another type or without configuration', async () => {
    const ab = await experiment('a_b', { variants: variants(50, 50) });
    const res = await preview(ab, '?user_id=alice');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: NOT_SPLIT_URL });
    const bare = await experiment('split_url');
    const none = await preview(bare, '?user_id=alice');
    expect(none.statusCode).toBe(400);
    expect(none.json()).toEqual({ detail: NO_SPLIT_URL_CONFIG });
  });

  it('409 when the stored configuration is no longer valid', async () => {
    const id = await experiment('split_url', { variants: variants(50, 50) });
    // Creation validates the configuration; an invalid stored one can only come from older data.
    await t.database.exec(`UPDATE experiments SET split_url_config = '{"variants":[{"name":"a","url":"x","traffic_allocation":90}]}' WHERE id = '${id}'`);
    const res = await preview(id, '?user_id=alice');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: STORED_CONFIG_INVALID });
  });

  it('401, 403 for ANALYST and VIEWER, 404 unknown experiment, 422 bad id or missing user_id', async () => {
    const id = await experiment('split_url', { variants: variants(50, 50) });
    expect((await preview(id, '?user_id=a', {})).statusCode).toBe(401);
    for (const role of ['ANALYST', 'VIEWER'] as const) {
      const user = await t.user({ role });
      expect((await preview(id, '?user_id=a', user.headers)).statusCode).toBe(403);
    }
    const unknown = await preview('00000000-0000-4000-8000-000000000000', '?user_id=a');
    expect(unknown.statusCode).toBe(404);
    const badId = await preview('nope', '?user_id=a');
    expect(badId.json().detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'experiment_id'] });
    const missing = await preview(id, '');
    expect(missing.json().detail[0]).toMatchObject({ type: 'missing', loc: ['query', 'user_id'] });
    expect((await preview(id, '?user_id=')).json().detail[0]).toMatchObject({ type: 'string_too_short', loc: ['query', 'user_id'] });
  });

  it('a core deployment answers 501 for the preview', async () => {
    const id = await experiment('split_url', { variants: variants(50, 50) });
    const core = await t.spawn({ DEPLOYMENT_PROFILE: 'core' });
    const res = await core.app.inject({ method: 'GET', url: `/api/v1/experiments/${id}/split-url/preview?user_id=a`, headers: dev.headers });
    expect(res.statusCode).toBe(501);
    expect(res.json()).toEqual({ detail: SPLIT_URL_NOT_AVAILABLE });
    expect((await core.app.inject({ method: 'GET', url: `/api/v1/experiments/${id}/split-url/preview?user_id=a` })).statusCode).toBe(401);
  });

  it('the preview operation is the same in both profiles (the full contract is a superset of the core one)', async () => {
    const core = await t.spawn({ DEPLOYMENT_PROFILE: 'core' });
    const path = '/api/v1/experiments/{experiment_id}/split-url/preview';
    const full = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json().paths[path].get;
    const coreOp = (await core.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json().paths[path].get;
    expect(full.operationId).toBe('previewSplitUrlVariant');
    expect(coreOp).toEqual(full);
  });
});
