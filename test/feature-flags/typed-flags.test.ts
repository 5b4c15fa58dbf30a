import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEGMENT_NOT_USABLE } from '../../src/modules/segments/service.js';
import { splitBucket, VARIATION_MESSAGES } from '../../src/targeting/index.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

// Typed flags (issue 28) through the API: create, update and view with their 422s, audit, and evaluation.
let t: TestApp;
let dev: TestUser;
let viewer: TestUser;
let key: Record<string, string>;
const BASE = '/api/v1/feature-flags';

beforeAll(async () => {
  t = await testApp();
  [dev, viewer] = await Promise.all([t.user({ role: 'DEVELOPER' }), t.user({ role: 'VIEWER' })]);
  key = (await t.apiKey(dev, ['sdk:ruleset'])).headers;
});
afterAll(() => t.close());

const rules = (...conditions: object[]) => ({ logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions }] });
const COPY = [
  { key: 'buy', value: 'Buy now' },
  { key: 'order', value: 'Place order', name: 'Order' },
  { key: 'classic', value: 'Checkout', description: 'The current copy' },
];
const typed = (body: Record<string, unknown> = {}) => ({
  key: t.unique('copy'), name: 'Copy', is_active: true, rollout_percentage: 100, value_type: 'string', variations: COPY, default_variation: 'buy', ...body,
});
const post = (payload: Record<string, unknown>, user = dev) => t.inject({ method: 'POST', url: `${BASE}/`, headers: user.headers, payload });
const put = (id: string, payload: Record<string, unknown>) => t.inject({ method: 'PUT', url: `${BASE}/${id}`, headers: dev.headers, payload });
async function create(body: Record<string, unknown> = {}) {
  const res = await post(typed(body));
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}
const evaluate = (flagKey: string, userId: string, context: Record<string, unknown> = {}) =>
  t.inject({ method: 'POST', url: `${BASE}/evaluate/${flagKey}`, headers: key, payload: { user_id: userId, context } });
const issue = (loc: Array<string | number>, msg: string) => ({ type: 'value_error', loc: ['body', ...loc], msg });

describe('create, view and update', () => {
  it('round-trips every typed field through create, read and list', async () => {
    const body = typed({
      off_variation: 'classic',
      variation_rules: [{ targeting_rules: rules({ attribute: 'country', operator: 'equals', value: 'DE' }), variation: 'order' }],
    });
    const res = await post(body);
    expect(res.statusCode).toBe(201);
    const view = res.json();
    expect(view).toMatchObject({
      key: body.key, value_type: 'string', variations: COPY, default_variation: 'buy', off_variation: 'classic',
      variation_rules: body.variation_rules, variation_split: null, default_value: false,
    });
    expect((await t.inject({ method: 'GET', url: `${BASE}/${view.id}`, headers: viewer.headers })).json()).toEqual(view);
    const list = (await t.inject({ method: 'GET', url: `${BASE}/?search=${body.key}`, headers: viewer.headers })).json();
    expect(list.items).toEqual([view]);
  });

  it('keeps a boolean flag exactly as before: no typed field in its view', async () => {
    const res = await post({ key: t.unique('plain'), name: 'Plain' });
    expect(Object.keys(res.json()).sort()).toEqual([
      'created_at', 'default_value', 'description', 'id', 'is_active', 'key', 'name', 'owner_id', 'rollout_percentage', 'status', 'tags', 'targeting_rules', 'updated_at',
    ]);
  });

  it('answers each problem with 422 at its place, never echoing the value', async () => {
    const cases: Array<[Record<string, unknown>, unknown[]]> = [
      [{ variations: [{ key: 'a', value: 12345 }, { key: 'a', value: 'x' }] }, [issue(['variations', 0, 'value'], VARIATION_MESSAGES.wrongType.string), issue(['variations', 1, 'key'], VARIATION_MESSAGES.duplicateKey), issue(['default_variation'], VARIATION_MESSAGES.unknownVariation)]],
      [{ default_variation: 'nope' }, [issue(['default_variation'], VARIATION_MESSAGES.unknownVariation)]],
      [{ off_variation: 'nope' }, [issue(['off_variation'], VARIATION_MESSAGES.unknownVariation)]],
      [{ default_variation: undefined }, [issue(['default_variation'], VARIATION_MESSAGES.defaultRequired)]],
      [{ default_variation: undefined, variation_split: [{ variation: 'buy', weight: 70 }, { variation: 'order', weight: 20 }] }, [issue(['variation_split'], VARIATION_MESSAGES.weightsSum)]],
      [{ variation_split: [{ variation: 'buy', weight: 100 }] }, [issue(['variation_split'], VARIATION_MESSAGES.defaultAndSplit)]],
      [{ variation_rules: [{ targeting_rules: rules(), split: [{ variation: 'nope', weight: 100 }] }] }, [issue(['variation_rules', 0, 'split', 0, 'variation'], VARIATION_MESSAGES.unknownVariation)]],
      [{ variation_rules: [{ targeting_rules: rules() }] }, [issue(['variation_rules', 0], VARIATION_MESSAGES.ruleServesOne)]],
      [{ value_type: 'number', variations: [{ key: 'a', value: 1 }, { key: 'b', value: '2' }], default_variation: 'a' }, [issue(['variations', 1, 'value'], VARIATION_MESSAGES.wrongType.number)]],
      [{ value_type: 'json', variations: [{ key: 'a', value: { big: 'x'.repeat(33_000) } }, { key: 'b', value: [1] }], default_variation: 'a' }, [issue(['variations', 0, 'value'], VARIATION_MESSAGES.valueTooLarge)]],
      [{ value_type: 'boolean', default_variation: undefined }, [issue(['variations'], VARIATION_MESSAGES.booleanHasNoVariations)]],
      [{ variations: undefined }, [issue(['variations'], VARIATION_MESSAGES.variationsRequired), issue(['default_variation'], VARIATION_MESSAGES.unknownVariation)]],
    ];
    for (const [body, detail] of cases) {
      const res = await post(typed(body));
      expect(res.statusCode, JSON.stringify(body).slice(0, 200)).toBe(422);
      expect(res.json()).toEqual({ detail });
      expect(res.body).not.toContain('12345');
      expect(res.body).not.toContain('nope');
    }
  });

  it('checks shape in the schema: variation keys, counts and weights', async () => {
    const res = await post(typed({ variations: [{ key: 'has space', value: 'x' }, ...COPY] }));
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0]).toMatchObject({ loc: ['body', 'variations', 0, 'key'] });
    expect(res.body).not.toContain('has space');
    const one = await post(typed({ variations: [COPY[0]] }));
    expect(one.json().detail[0]).toMatchObject({ loc: ['body', 'variations'] });
    const weight = await post(typed({ default_variation: undefined, variation_split: [{ variation: 'buy', weight: 50.5 }, { variation: 'order', weight: 49.5 }] }));
    expect(weight.json().detail[0]).toMatchObject({ loc: ['body', 'variation_split', 0, 'weight'] });
  });

  it('checks the targeting rules of variation rules at their place, segments included', async () => {
    const unknownSegment = rules({ attribute: 'segment', operator: 'in_segment', value: '00000000-0000-4000-8000-000000000000' });
    const res = await post(typed({ variation_rules: [{ targeting_rules: rules(), variation: 'order' }, { targeting_rules: unknownSegment, variation: 'order' }] }));
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ detail: [issue(['variation_rules', 1, 'targeting_rules'], SEGMENT_NOT_USABLE)] });
    const bad = await post(typed({ variation_rules: [{ targeting_rules: { logical_operator: 'XOR', groups: [] }, variation: 'order' }] }));
    expect(bad.json().detail[0].loc).toEqual(['body', 'variation_rules', 0, 'targeting_rules']);
  });

  it('refuses a boolean flag with variations and typed fields without a role', async () => {
    const res = await post({ key: t.unique('b'), name: 'B', variations: COPY, default_variation: 'buy' });
    expect(res.json()).toEqual({ detail: [issue(['variations'], VARIATION_MESSAGES.booleanHasNoVariations), issue(['default_variation'], VARIATION_MESSAGES.booleanHasNoVariations)] });
    expect((await post(typed(), viewer)).statusCode).toBe(403);
    expect((await t.inject({ method: 'POST', url: `${BASE}/`, payload: typed() })).statusCode).toBe(401);
  });

  it('updates: value_type is fixed, a named variation cannot be removed, default and split replace each other', async () => {
    const flag = await create({ off_variation: 'classic' });
    expect((await put(flag.id, { value_type: 'number' })).json()).toEqual({ detail: [issue(['value_type'], VARIATION_MESSAGES.valueTypeFixed)] });
    expect((await put(flag.id, { value_type: 'string', name: 'Same type' })).statusCode).toBe(200);
    const removed = await put(flag.id, { variations: COPY.slice(0, 2) });
    expect(removed.json()).toEqual({ detail: [issue(['variations'], VARIATION_MESSAGES.variationRemoved)] });
    const split = await put(flag.id, { variation_split: [{ variation: 'buy', weight: 30 }, { variation: 'order', weight: 70 }] });
    expect(split.json()).toMatchObject({ default_variation: null, variation_split: [{ variation: 'buy', weight: 30 }, { variation: 'order', weight: 70 }], off_variation: 'classic' });
    const back = await put(flag.id, { default_variation: 'order', off_variation: null });
    expect(back.json()).toMatchObject({ default_variation: 'order', variation_split: null, off_variation: null });
    const fewer = await put(flag.id, { variations: COPY.slice(1) });
    expect(fewer.statusCode).toBe(200);
    expect(fewer.json().variations).toEqual(COPY.slice(1));
    // Unchanged after a refusal.
    expect((await put(flag.id, { default_variation: 'buy' })).statusCode).toBe(422);
    expect((await t.inject({ method: 'GET', url: `${BASE}/${flag.id}`, headers: dev.headers })).json()).toEqual(fewer.json());
  });

  it('writes the typed fields into the audit entries', async () => {
    const flag = await create();
    await put(flag.id, { default_variation: 'order' });
    const history = (await t.inject({ method: 'GET', url: `${BASE}/${flag.id}/history`, headers: dev.headers })).json();
    expect(history[0]).toMatchObject({ action: 'feature_flag_update', before: { default_variation: 'buy' }, after: { default_variation: 'order' } });
    expect(history[1]).toMatchObject({ action: 'feature_flag_create', after: { value_type: 'string', variations: COPY, default_variation: 'buy', off_variation: null } });
  });
});

describe('evaluation', () => {
  it('serves off_variation when off, the first matching rule, then the default', async () => {
    const flag = await create({
      off_variation: 'classic',
      targeting_rules: rules({ attribute: 'plan', operator: 'not_equals', value: 'blocked' }),
      variation_rules: [
        { targeting_rules: rules({ attribute: 'country', operator: 'equals', value: 'DE' }), variation: 'order' },
        { targeting_rules: rules({ attribute: 'country', operator: 'in', value: ['DE', 'FR'] }), variation: 'classic' },
      ],
    });
    expect((await evaluate(flag.key, 'u1', { country: 'DE', plan: 'pro' })).json()).toEqual({
      flag_key: flag.key, enabled: true, reason: 'targeting_match', rule: 'plan not_equals blocked', variation: 'order', value: 'Place order', variation_reason: 'rule',
    });
    expect((await evaluate(flag.key, 'u1', { country: 'FR', plan: 'pro' })).json()).toMatchObject({ variation: 'classic', variation_reason: 'rule' });
    expect((await evaluate(flag.key, 'u1', { country: 'US', plan: 'pro' })).json()).toMatchObject({ enabled: true, variation: 'buy', value: 'Buy now', variation_reason: 'default' });
    expect((await evaluate(flag.key, 'u1', { plan: 'blocked' })).json()).toEqual({
      flag_key: flag.key, enabled: false, reason: 'targeting_miss', variation: 'classic', value: 'Checkout', variation_reason: 'off',
    });
    const get = await t.inject({ method: 'GET', url: `${BASE}/evaluate/${flag.key}?user_id=u1&context=${encodeURIComponent('{"country":"DE"}')}`, headers: key });
    expect(get.json()).toMatchObject({ variation: 'order', value: 'Place order' });
  });

  it('serves nothing when off without off_variation (the caller default), and numbers and JSON values as stored', async () => {
    const num = await create({ is_active: false, value_type: 'number', variations: [{ key: 'low', value: 0.5 }, { key: 'high', value: 10 }], default_variation: 'high' });
    expect((await evaluate(num.key, 'u1')).json()).toEqual({ flag_key: num.key, enabled: false, reason: 'disabled', variation_reason: 'off' });
    await t.inject({ method: 'POST', url: `${BASE}/${num.id}/activate`, headers: dev.headers });
    expect((await evaluate(num.key, 'u1')).json()).toMatchObject({ enabled: true, variation: 'high', value: 10 });
    const json = await create({ value_type: 'json', variations: [{ key: 'a', value: { limits: [1, 2], nested: { on: true } } }, { key: 'b', value: [] }], default_variation: 'a' });
    expect((await evaluate(json.key, 'u1')).json()).toMatchObject({ variation: 'a', value: { limits: [1, 2], nested: { on: true } } });
  });

  it('splits users by the sticky split hash, the same user always getting the same variation', async () => {
    const flag = await create({ default_variation: undefined, variation_split: [{ variation: 'buy', weight: 25 }, { variation: 'order', weight: 75 }] });
    for (const user of ['u1', 'u2', 'u3', 'u4', 'u5', 'u6']) {
      const expected = splitBucket(flag.key, user) < 2500 ? 'buy' : 'order';
      const first = (await evaluate(flag.key, user)).json();
      expect(first).toMatchObject({ enabled: true, reason: 'rollout', variation: expected, variation_reason: 'split' });
      expect((await evaluate(flag.key, user)).json()).toEqual(first);
    }
  });

  it('the user route answers booleans as before, and variations with details=true; the SDK ruleset carries the typed fields', async () => {
    const flag = await create({ off_variation: 'classic' });
    const plain = await t.inject({ method: 'GET', url: `${BASE}/user/someone`, headers: key });
    expect(plain.json()[flag.key]).toBe(true);
    const details = await t.inject({ method: 'GET', url: `${BASE}/user/someone?details=true`, headers: key });
    expect(details.statusCode).toBe(200);
    expect(details.json()[flag.key]).toEqual({ enabled: true, variation: 'buy', value: 'Buy now' });
    const booleans = Object.entries(details.json()).filter(([k]) => plain.json()[k] !== undefined);
    expect(booleans.length).toBe(Object.keys(plain.json()).length);
    for (const [k, v] of booleans) expect((v as { enabled: boolean }).enabled).toBe(plain.json()[k]);
    const ruleset = (await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: key })).json();
    expect(ruleset.split_bucketing).toEqual({ name: 'murmur3_32_split', version: 1 });
    expect(ruleset.flags.find((f: { key: string }) => f.key === flag.key)).toMatchObject({ value_type: 'string', variations: COPY, default_variation: 'buy', off_variation: 'classic' });
  });
});
