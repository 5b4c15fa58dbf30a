/**
 * Issue #27: regex targeting has a bounded cost. Flags, experiments and segments refuse rules past the caps (422 at
 * the rules' loc, naming the limit, never echoing the pattern); rules stored before the caps, or pushed past them by
 * a segment edited later, still load and evaluate (to an error or a non-match), never crash.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REGEX_CONDITIONS, RULE_MESSAGES, SEGMENT_RULE_MESSAGES } from '../../src/targeting/index.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
let key: { headers: Record<string, string> };
const BASE = '/api/v1/feature-flags';
/** The issue's pattern: 3.5 s per search on an 8 KB attribute before the caps. */
const ISSUE_PATTERN = '(?i)(?:(\\w+)\\s?){1,999}#';

beforeAll(async () => {
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
  key = await t.apiKey(dev);
});
afterAll(() => t.close());

const condition = (attribute: string, operator: string, value?: unknown) => ({ attribute, operator, value });
const rules = (conditions: object[], logical_operator = 'AND') => ({ logical_operator, groups: [{ logical_operator, conditions }] });
const regexes = (n: number, pattern = '@example\\.com$') => Array.from({ length: n }, () => condition('email', 'regex', pattern));
const issue = (loc: string[], msg: string) => ({ detail: [{ type: 'value_error', loc, msg }] });

const post = (url: string, payload: object) => t.inject({ method: 'POST', url, headers: dev.headers, payload });
const put = (url: string, payload: object) => t.inject({ method: 'PUT', url, headers: dev.headers, payload });
const flagBody = (targeting_rules: unknown) => ({ key: t.unique('flag'), name: 'F', is_active: true, rollout_percentage: 100, targeting_rules });

async function created(url: string, payload: object) {
  const res = await post(url, payload);
  if (res.statusCode !== 201) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

const evaluate = (flagKey: string, context: unknown) =>
  t.inject({ method: 'POST', url: `${BASE}/evaluate/${flagKey}`, headers: key.headers, payload: { user_id: 'u1', context } as object });

describe('refusals', () => {
  it('a flag: a pattern over the program size, more regex conditions than allowed, counting its segments', async () => {
    const tooLarge = await post(`${BASE}/`, flagBody(rules([condition('email', 'regex', ISSUE_PATTERN)])));
    expect(tooLarge.statusCode).toBe(422);
    expect(tooLarge.json()).toEqual(issue(['body', 'targeting_rules'], RULE_MESSAGES.regexTooLarge));
    expect(tooLarge.body).not.toContain('999');

    const tooMany = await post(`${BASE}/`, flagBody(rules(regexes(MAX_REGEX_CONDITIONS + 1))));
    expect(tooMany.json()).toEqual(issue(['body', 'targeting_rules'], RULE_MESSAGES.tooManyRegex));

    const segment = await created('/api/v1/segments', { name: t.unique('seg'), rules: rules(regexes(8)) });
    const naming = (own: number) => rules([condition('segment', 'in_segment', segment.id), ...regexes(own)]);
    const over = await post(`${BASE}/`, flagBody(naming(3)));
    expect(over.statusCode).toBe(422);
    expect(over.json()).toEqual(issue(['body', 'targeting_rules'], RULE_MESSAGES.tooManyRegex));
    const flag = await created(`${BASE}/`, flagBody(naming(2)));
    const update = await put(`${BASE}/${flag.id}`, { targeting_rules: naming(3) });
    expect(update.json()).toEqual(issue(['body', 'targeting_rules'], RULE_MESSAGES.tooManyRegex));
    // Named twice, the segment's conditions run twice.
    const twice = await put(`${BASE}/${flag.id}`, { targeting_rules: rules([condition('segment', 'in_segment', segment.id), condition('segment', 'not_in_segment', segment.id)], 'OR') });
    expect(twice.json()).toEqual(issue(['body', 'targeting_rules'], RULE_MESSAGES.tooManyRegex));
  });

  it('a segment: a pattern over the program size, at body.rules', async () => {
    const res = await post('/api/v1/segments', { name: t.unique('seg'), rules: rules([condition('email', 'regex', ISSUE_PATTERN)]) });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual(issue(['body', 'rules'], SEGMENT_RULE_MESSAGES.regexTooLarge));
    expect(res.body).not.toContain('999');
  });

  it('an experiment: its regex conditions counted with its segments', async () => {
    const segment = await created('/api/v1/segments', { name: t.unique('seg'), rules: rules(regexes(6)) });
    const experiment = (targeting_rules: unknown) => ({
      name: 'E', key: t.unique('exp'), targeting_rules,
      variants: [{ name: 'control', is_control: true, traffic_allocation: 50 }, { name: 'treatment', traffic_allocation: 50 }],
      metrics: [{ name: 'Purchase', event_name: 'purchase', metric_type: 'conversion', is_primary: true }],
    });
    const over = await post('/api/v1/experiments/', experiment(rules([condition('segment', 'in_segment', segment.id), ...regexes(5)])));
    expect(over.statusCode).toBe(422);
    expect(over.json()).toEqual(issue(['body', 'targeting_rules'], RULE_MESSAGES.tooManyRegex));
    const tooLarge = await post('/api/v1/experiments/', experiment(rules([condition('email', 'regex', ISSUE_PATTERN)])));
    expect(tooLarge.json()).toEqual(issue(['body', 'targeting_rules'], RULE_MESSAGES.regexTooLarge));
    expect((await post('/api/v1/experiments/', experiment(rules([condition('segment', 'in_segment', segment.id), ...regexes(4)])))).statusCode).toBe(201);
  });
});

describe('evaluation within the caps', () => {
  it('a value longer than one search may read is a non-match for regex and not_regex alike', async () => {
    const positive = await created(`${BASE}/`, flagBody(rules([condition('email', 'regex', 'a$')])));
    const negative = await created(`${BASE}/`, flagBody(rules([condition('email', 'not_regex', 'b$')])));
    // 'a$' compiles to a few instructions: 8,000 characters cost more than MAX_REGEX_TEST_COST.
    const long = 'a'.repeat(8_000);
    expect((await evaluate(positive.key, { email: long })).json()).toMatchObject({ enabled: false, reason: 'targeting_miss' });
    expect((await evaluate(negative.key, { email: long })).json()).toMatchObject({ enabled: false, reason: 'targeting_miss' });
    expect((await evaluate(positive.key, { email: 'a'.repeat(100) })).json()).toMatchObject({ enabled: true, reason: 'targeting_match' });
    expect((await evaluate(negative.key, { email: 'a'.repeat(100) })).json()).toMatchObject({ enabled: true, reason: 'targeting_match' });
  });
});

describe('rules stored past the caps', () => {
  it("a flag stored with the issue's pattern and more regex conditions than allowed loads and answers, never crashes", async () => {
    const pattern = await created(`${BASE}/`, flagBody(rules([condition('email', 'regex', 'x')])));
    const many = await created(`${BASE}/`, flagBody(rules([condition('email', 'regex', 'x')])));
    // Rules past the caps exist only in data stored before them; the API cannot write them.
    const json = (r: unknown) => JSON.stringify(r).replace(/'/g, "''");
    await t.database.exec(`UPDATE flag_environment_states SET targeting_rules = '${json(rules([condition('email', 'not_regex', ISSUE_PATTERN)]))}' WHERE flag_id = '${pattern.id}';
      UPDATE flag_environment_states SET targeting_rules = '${json(rules(regexes(MAX_REGEX_CONDITIONS + 1, 'x'), 'OR'))}' WHERE flag_id = '${many.id}'`);
    expect((await put(`${BASE}/${pattern.id}`, { name: 'legacy' })).statusCode).toBe(200);
    const words = 'word '.repeat(1600);
    expect((await evaluate(pattern.key, { email: words })).json()).toEqual({ flag_key: pattern.key, enabled: false, reason: 'targeting_miss' });
    expect((await evaluate(many.key, { email: 'x' })).json()).toEqual({ flag_key: many.key, enabled: false, reason: 'error' });
    const user = await t.inject({ method: 'GET', url: `${BASE}/user/u1?context=${encodeURIComponent(JSON.stringify({ email: 'x' }))}`, headers: key.headers });
    expect(user.statusCode).toBe(200);
    expect(user.json()[many.key]).toBe(false);
  });

  it('a segment stored with a pattern over the cap is invalid; one edited past a flag’s regex limit makes that flag an error', async () => {
    const stored = await created('/api/v1/segments', { name: t.unique('seg'), rules: rules([condition('email', 'regex', 'x')]) });
    const namingStored = await created(`${BASE}/`, flagBody(rules([condition('segment', 'in_segment', stored.id)])));
    await t.database.exec(`UPDATE segments SET rules = '${JSON.stringify(rules([condition('email', 'regex', ISSUE_PATTERN)]))}' WHERE id = '${stored.id}'`);
    expect((await put(`/api/v1/segments/${stored.id}`, { name: 'legacy' })).statusCode).toBe(200);
    expect((await evaluate(namingStored.key, { email: 'word '.repeat(1600) })).json()).toMatchObject({ enabled: false, reason: 'error' });

    const edited = await created('/api/v1/segments', { name: t.unique('seg'), rules: rules(regexes(5, 'x')) });
    const flag = await created(`${BASE}/`, flagBody(rules([condition('segment', 'in_segment', edited.id), ...regexes(5, 'x')])));
    expect((await evaluate(flag.key, { email: 'x' })).json()).toMatchObject({ enabled: true, reason: 'targeting_match' });
    expect((await put(`/api/v1/segments/${edited.id}`, { rules: rules(regexes(6, 'x')) })).statusCode).toBe(200);
    expect((await evaluate(flag.key, { email: 'x' })).json()).toEqual({ flag_key: flag.key, enabled: false, reason: 'error' });
  });
});
