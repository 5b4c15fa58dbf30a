import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MEMBERS_NEED_ID_LIST,
  NO_RULES_TO_PREVIEW,
  PREVIEW_TOO_MANY_NODES,
  PREVIEW_TOO_MANY_REGEX,
  RULES_NOT_FOR_ID_LIST,
  SEGMENT_ARCHIVED,
  SEGMENT_IN_USE,
  SEGMENT_NOT_FOUND,
  TOO_MANY_MEMBERS,
} from '../../src/modules/segments/service.js';
import { CONTEXT_TOO_DEEP_MESSAGE, SEGMENT_RULE_MESSAGES } from '../../src/targeting/index.js';
import { experiment } from '../helpers/fixtures.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let admin: TestUser;
let dev: TestUser;
let viewer: TestUser;
const BASE = '/api/v1/segments';
const MISSING_ID = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  t = await testApp();
  [admin, dev, viewer] = await Promise.all([t.user({ role: 'ADMIN' }), t.user({ role: 'DEVELOPER' }), t.user({ role: 'VIEWER' })]);
});
afterAll(() => t.close());

const condition = (attribute: string, operator: string, value?: unknown) => ({ attribute, operator, value });
const rules = (...conditions: object[]) => ({ logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions }] });
const PRO = rules(condition('plan', 'equals', 'pro'), condition('country', 'in', ['US', 'CA']));
const rulesError = (msg: string) => ({ detail: [{ type: 'value_error', loc: ['body', 'rules'], msg }] });

async function createSegment(body: Record<string, unknown> = {}) {
  const res = await t.inject({ method: 'POST', url: BASE, headers: dev.headers, payload: { name: t.unique('seg'), rules: PRO, ...body } });
  if (res.statusCode !== 201) throw new Error(`create segment: ${res.statusCode} ${res.body}`);
  return res.json();
}
const idList = () => createSegment({ kind: 'id_list', rules: undefined });
const read = async (id: string) => (await t.inject({ method: 'GET', url: `${BASE}/${id}`, headers: viewer.headers })).json();
const post = (url: string, payload: unknown, user = dev) => t.inject({ method: 'POST', url, headers: user.headers, payload: payload as object });

async function createFlagUsing(segmentId: string) {
  const res = await post('/api/v1/feature-flags/', { key: t.unique('flag'), name: 'Uses segment', targeting_rules: rules(condition('segment', 'in_segment', segmentId)) });
  if (res.statusCode !== 201) throw new Error(`create flag: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** Old-format rules exist only in older data: the API refuses to write them, so the test writes them directly. */
async function makeOldFormat(id: string) {
  await t.database.exec(`UPDATE segments SET rules = '{"match": "all", "filters": []}' WHERE id = '${id}'`);
}

describe('create and read', () => {
  it('creates a rules segment and returns its rules exactly as sent', async () => {
    const sent = { groups: [{ conditions: [{ operator: 'equals', value: 'pro', attribute: 'plan', ui: { id: 3 } }], logical_operator: 'AND' }], logical_operator: 'OR' };
    const res = await post(BASE, { name: 'Pro users', rules: sent, description: 'paying' });
    expect(res.statusCode).toBe(201);
    const segment = res.json();
    expect(segment).toEqual({
      id: expect.any(String), name: 'Pro users', description: 'paying', kind: 'rules', rules: sent, status: 'active', owner_id: dev.id,
      created_at: expect.any(String), updated_at: expect.any(String),
    });
    expect(JSON.stringify(segment.rules)).toBe(JSON.stringify(sent));
    const detail = await read(segment.id);
    expect(JSON.stringify(detail.rules)).toBe(JSON.stringify(sent));
    expect(detail.member_count).toBeNull();
  });

  it('creates an id_list segment with rules null and member_count 0', async () => {
    const segment = await idList();
    expect(segment).toMatchObject({ kind: 'id_list', rules: null });
    expect(segment).not.toHaveProperty('member_count');
    expect(await read(segment.id)).toMatchObject({ kind: 'id_list', rules: null, member_count: 0 });
  });

  it('requires rules for a rules segment and refuses them for an id list', async () => {
    const name = t.unique('seg');
    const missing = await post(BASE, { name });
    expect(missing.json()).toEqual({ detail: [{ type: 'missing', loc: ['body', 'rules'], msg: 'Field required' }] });
    expect((await post(BASE, { name, kind: 'id_list', rules: PRO })).json()).toEqual(rulesError(RULES_NOT_FOR_ID_LIST));
    expect((await post(BASE, { name, kind: 'list', rules: PRO })).json().detail[0]).toMatchObject({ type: 'enum', loc: ['body', 'kind'] });
    expect((await post(BASE, { name, rules: PRO, owner: 'me' })).json().detail[0]).toMatchObject({ type: 'extra_forbidden', loc: ['body', 'owner'] });
    const list = (await t.inject({ method: 'GET', url: `${BASE}?limit=1000`, headers: viewer.headers })).json();
    expect(list.filter((s: { name: string }) => s.name === name)).toEqual([]);
  });

  it('refuses rules beyond each limit at body.rules with a fixed message that never repeats them', async () => {
    const secret = 'zz-secret-value';
    const group = (n: number, make = (i: number) => condition('a', 'equals', `${secret}${i}`)) => ({
      logical_operator: 'AND', conditions: Array.from({ length: n }, (_, i) => make(i)),
    });
    const cases: Array<[unknown, string]> = [
      [{ logical_operator: 'AND', groups: [] }, SEGMENT_RULE_MESSAGES.noGroups],
      [{ logical_operator: 'AND', groups: Array.from({ length: 21 }, () => group(1)) }, SEGMENT_RULE_MESSAGES.tooManyGroups],
      [{ logical_operator: 'AND', groups: [group(1), group(0)] }, SEGMENT_RULE_MESSAGES.emptyGroup],
      [{ logical_operator: 'AND', groups: [group(26), group(25)] }, SEGMENT_RULE_MESSAGES.tooManyConditions],
      [{ logical_operator: 'AND', groups: [group(11, () => condition('a', 'regex', '^x'))] }, SEGMENT_RULE_MESSAGES.tooManyRegex],
      [rules(condition('a', 'in', Array.from({ length: 600 }, (_, i) => i)), condition('b', 'not_in', Array.from({ length: 401 }, (_, i) => i))), SEGMENT_RULE_MESSAGES.tooManyListValues],
      [rules(condition('segment', 'in_segment', MISSING_ID)), SEGMENT_RULE_MESSAGES.segmentOperator],
      [rules(condition('a', 'resembles', secret)), SEGMENT_RULE_MESSAGES.unknownOperator],
      [null, SEGMENT_RULE_MESSAGES.notObject],
      ['everyone', SEGMENT_RULE_MESSAGES.notObject],
    ];
    for (const [sent, msg] of cases) {
      const res = await post(BASE, { name: 'limits', rules: sent });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual(rulesError(msg));
      expect(res.body).not.toContain(secret);
    }
    const atLimits = { logical_operator: 'OR', groups: [group(25), group(15), group(10, () => condition('a', 'regex', '^x'))] };
    expect((await post(BASE, { name: 'at limits', rules: atLimits })).statusCode).toBe(201);
  });

  it('needs DEVELOPER or up to create; reading needs a sign-in; unknown 404, non-UUID 422', async () => {
    expect((await post(BASE, { name: 'x', rules: PRO }, viewer)).statusCode).toBe(403);
    expect((await t.inject({ method: 'POST', url: BASE, payload: { name: 'x', rules: PRO } })).statusCode).toBe(401);
    expect((await t.inject({ method: 'GET', url: BASE })).statusCode).toBe(401);
    const missing = await t.inject({ method: 'GET', url: `${BASE}/${MISSING_ID}`, headers: viewer.headers });
    expect([missing.statusCode, missing.json()]).toEqual([404, { detail: SEGMENT_NOT_FOUND }]);
    const bad = await t.inject({ method: 'GET', url: `${BASE}/seg_123`, headers: viewer.headers });
    expect(bad.json().detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'segment_id'] });
  });

  it('lists newest first, filtered by status', async () => {
    const a = await createSegment({ status: 'inactive' });
    const b = await createSegment();
    const all = (await t.inject({ method: 'GET', url: `${BASE}?limit=1000`, headers: viewer.headers })).json();
    const ids = all.map((s: { id: string }) => s.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
    expect(all[0]).not.toHaveProperty('member_count');
    const inactive = (await t.inject({ method: 'GET', url: `${BASE}?status=inactive&limit=1000`, headers: viewer.headers })).json();
    expect(inactive.map((s: { id: string }) => s.id)).toContain(a.id);
    expect(inactive.every((s: { status: string }) => s.status === 'inactive')).toBe(true);
    expect((await t.inject({ method: 'GET', url: `${BASE}?status=ACTIVE`, headers: viewer.headers })).statusCode).toBe(422);
  });

  it('keeps segments with owner_id null when the owner account is deleted', async () => {
    const owner = await t.user({ role: 'DEVELOPER' });
    const res = await post(BASE, { name: 'orphan', rules: PRO }, owner);
    const su = await t.user({ superuser: true });
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/users/${owner.id}`, headers: su.headers })).statusCode).toBe(204);
    expect(await read(res.json().id)).toMatchObject({ name: 'orphan', owner_id: null });
  });
});

describe('update and archive', () => {
  it('changes name, rules and status; kind never; rules never on an id list', async () => {
    const segment = await createSegment();
    const next = rules(condition('plan', 'equals', 'team'));
    const res = await t.inject({ method: 'PUT', url: `${BASE}/${segment.id}`, headers: admin.headers, payload: { name: 'Team', rules: next, status: 'inactive' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Team', rules: next, status: 'inactive' });
    const kind = await t.inject({ method: 'PUT', url: `${BASE}/${segment.id}`, headers: dev.headers, payload: { kind: 'id_list' } });
    expect(kind.json().detail[0]).toMatchObject({ type: 'extra_forbidden', loc: ['body', 'kind'] });
    const list = await idList();
    const listRules = await t.inject({ method: 'PUT', url: `${BASE}/${list.id}`, headers: dev.headers, payload: { rules: next } });
    expect([listRules.statusCode, listRules.json()]).toEqual([422, rulesError(RULES_NOT_FOR_ID_LIST)]);
    const badRules = await t.inject({ method: 'PUT', url: `${BASE}/${segment.id}`, headers: dev.headers, payload: { rules: { logical_operator: 'AND', groups: [] } } });
    expect(badRules.json()).toEqual(rulesError(SEGMENT_RULE_MESSAGES.noGroups));
    expect((await t.inject({ method: 'PUT', url: `${BASE}/${segment.id}`, headers: viewer.headers, payload: { name: 'no' } })).statusCode).toBe(403);
    expect((await t.inject({ method: 'PUT', url: `${BASE}/${MISSING_ID}`, headers: dev.headers, payload: { name: 'no' } })).statusCode).toBe(404);
    expect(await read(segment.id)).toMatchObject({ name: 'Team', rules: next, status: 'inactive' });
  });

  it('keeps old-format rules: returned unchanged, a PUT without rules succeeds', async () => {
    const segment = await createSegment();
    await makeOldFormat(segment.id);
    const res = await t.inject({ method: 'PUT', url: `${BASE}/${segment.id}`, headers: dev.headers, payload: { name: 'Legacy' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Legacy', rules: { match: 'all', filters: [] } });
  });

  it('archives on DELETE', async () => {
    const segment = await createSegment();
    expect((await t.inject({ method: 'DELETE', url: `${BASE}/${segment.id}`, headers: viewer.headers })).statusCode).toBe(403);
    const res = await t.inject({ method: 'DELETE', url: `${BASE}/${segment.id}`, headers: dev.headers });
    expect([res.statusCode, res.body]).toEqual([204, '']);
    expect((await read(segment.id)).status).toBe('archived');
    expect((await t.inject({ method: 'DELETE', url: `${BASE}/${MISSING_ID}`, headers: dev.headers })).statusCode).toBe(404);
  });

  it('refuses to archive or deactivate a segment a non-archived flag names (409 segment_in_use), changing nothing', async () => {
    const segment = await createSegment();
    const flag = await createFlagUsing(segment.id);
    const expected = {
      detail: { code: 'segment_in_use', message: SEGMENT_IN_USE, feature_flags: [{ id: flag.id, key: flag.key, name: flag.name }], experiments: [] },
    };
    const del = await t.inject({ method: 'DELETE', url: `${BASE}/${segment.id}`, headers: dev.headers });
    expect([del.statusCode, del.json()]).toEqual([409, expected]);
    for (const status of ['inactive', 'archived']) {
      const put = await t.inject({ method: 'PUT', url: `${BASE}/${segment.id}`, headers: dev.headers, payload: { status, name: 'changed' } });
      expect([put.statusCode, put.json()]).toEqual([409, expected]);
    }
    expect(await read(segment.id)).toMatchObject({ status: 'active', name: segment.name });
    await post('/api/v1/feature-flags/bulk-toggle', { ids: [flag.id], action: 'archive' });
    expect((await t.inject({ method: 'DELETE', url: `${BASE}/${segment.id}`, headers: dev.headers })).statusCode).toBe(204);
  });

  it('names the draft, active or paused experiments that use the segment in the 409 and in its usage list', async () => {
    const segment = await createSegment();
    const draft = await experiment(t, dev, { targeting_rules: rules(condition('segment', 'in_segment', segment.id)), start: false });
    const res = await t.inject({ method: 'DELETE', url: `${BASE}/${segment.id}`, headers: dev.headers });
    expect([res.statusCode, res.json().detail.experiments]).toEqual([409, [{ id: draft.id, key: draft.key, name: expect.any(String), status: 'draft' }]]);
    expect(res.json().detail.feature_flags).toEqual([]);
    const usage = await t.inject({ method: 'GET', url: `${BASE}/${segment.id}/experiments`, headers: viewer.headers });
    expect(usage.json().experiments).toEqual([expect.objectContaining({ id: draft.id, status: 'draft' })]);
    expect((await read(segment.id)).status).toBe('active');
  });

  it('lists completed and archived experiments that name the segment, which do not hold it', async () => {
    const segment = await createSegment();
    const done = await experiment(t, dev, { targeting_rules: rules(condition('segment', 'in_segment', segment.id)) });
    expect((await post(`/api/v1/experiments/${done.id}/complete`, {})).statusCode).toBe(200);
    const usage = async () => (await t.inject({ method: 'GET', url: `${BASE}/${segment.id}/experiments`, headers: viewer.headers })).json().experiments;
    expect(await usage()).toEqual([expect.objectContaining({ id: done.id, status: 'completed' })]);
    expect((await post(`/api/v1/experiments/${done.id}/archive`, {})).statusCode).toBe(200);
    expect(await usage()).toEqual([expect.objectContaining({ id: done.id, status: 'archived' })]);
    expect((await t.inject({ method: 'DELETE', url: `${BASE}/${segment.id}`, headers: dev.headers })).statusCode).toBe(204);
  });

  it('lists the flags and experiments that name a segment', async () => {
    const segment = await createSegment();
    const flag = await createFlagUsing(segment.id);
    const res = await t.inject({ method: 'GET', url: `${BASE}/${segment.id}/experiments`, headers: viewer.headers });
    expect(res.json()).toEqual({ segment_id: segment.id, experiments: [], feature_flags: [{ id: flag.id, key: flag.key, name: flag.name, status: 'inactive' }] });
    expect((await t.inject({ method: 'GET', url: `${BASE}/${MISSING_ID}/experiments`, headers: viewer.headers })).statusCode).toBe(404);
    expect((await t.inject({ method: 'GET', url: `${BASE}/${segment.id}/experiments` })).statusCode).toBe(401);
  });

  it('tells flag and experiment validation which segments are unusable', async () => {
    const good = await createSegment();
    const inactive = await createSegment({ status: 'inactive' });
    const old = await createSegment();
    await makeOldFormat(old.id);
    const list = await idList();
    const ids = [good.id, inactive.id, old.id, list.id, MISSING_ID, 'seg_123'];
    expect(await t.services.segments.unusableSegmentIds(ids)).toEqual([inactive.id, old.id, MISSING_ID, 'seg_123']);
  });
});

describe('evaluate', () => {
  it('answers membership with the satisfied conditions, for nested and dotted contexts', async () => {
    const segment = await createSegment();
    for (const user_context of [{ plan: 'pro', user: { country: 'US' } }, { 'user.plan': 'pro', 'user.country': 'CA' }]) {
      const res = await post(`${BASE}/${segment.id}/evaluate`, { user_context }, viewer);
      expect(res.json()).toEqual({ segment_id: segment.id, is_member: true, matched_rules: ['plan equals pro', expect.stringMatching(/^country in \["US","CA"\]$/)] });
    }
    const no = await post(`${BASE}/${segment.id}/evaluate`, { user_context: { plan: 'pro', country: 'FR' } }, viewer);
    expect(no.json()).toEqual({ segment_id: segment.id, is_member: false, matched_rules: [] });
  });

  it('answers id-list membership from user_context.user_id', async () => {
    const list = await idList();
    await post(`${BASE}/${list.id}/members`, { add: ['u-1'] });
    const ask = async (user_context: object) => (await post(`${BASE}/${list.id}/evaluate`, { user_context }, viewer)).json();
    expect(await ask({ user_id: 'u-1' })).toEqual({ segment_id: list.id, is_member: true, matched_rules: [] });
    expect((await ask({ user_id: 'u-2' })).is_member).toBe(false);
    expect((await ask({ user_id: 1 })).is_member).toBe(false);
    expect((await ask({})).is_member).toBe(false);
    // Only the top-level key counts: a nested or dotted user_id is another attribute.
    expect((await ask({ user: { user_id: 'u-1' } })).is_member).toBe(false);
    expect((await ask({ 'user.user_id': 'u-1' })).is_member).toBe(false);
    const bulk = async (user_context: object) => (await post(`${BASE}/bulk-evaluate`, { user_context, segment_ids: [list.id] }, viewer)).json().results[list.id];
    expect([await bulk({ user_id: 'u-1' }), await bulk({ user: { user_id: 'u-1' } }), await bulk({ 'user.user_id': 'u-1' })]).toEqual([true, false, false]);
  });

  it('refuses old-format rules with 409, over-limit contexts with 422, unknown segments with 404', async () => {
    const segment = await createSegment();
    await makeOldFormat(segment.id);
    const old = await post(`${BASE}/${segment.id}/evaluate`, { user_context: { plan: 'pro' } }, viewer);
    expect([old.statusCode, old.json()]).toEqual([409, { detail: `Segment rules not valid: ${SEGMENT_RULE_MESSAGES.logicalOperator}` }]);
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 10; i++) deep = { a: deep };
    const tooDeep = await post(`${BASE}/${segment.id}/evaluate`, { user_context: deep }, viewer);
    expect([tooDeep.statusCode, tooDeep.json()]).toEqual([422, { detail: [{ type: 'value_error', loc: ['body', 'user_context'], msg: CONTEXT_TOO_DEEP_MESSAGE }] }]);
    expect((await post(`${BASE}/${MISSING_ID}/evaluate`, { user_context: {} }, viewer)).statusCode).toBe(404);
    expect((await post(`${BASE}/${segment.id}/evaluate`, {}, viewer)).json().detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'user_context'] });
    expect((await t.inject({ method: 'POST', url: `${BASE}/${segment.id}/evaluate`, payload: { user_context: {} } })).statusCode).toBe(401);
  });

  it('bulk-evaluates up to 50 segments; unknown and old-format segments are false', async () => {
    const pro = await createSegment();
    const team = await createSegment({ rules: rules(condition('plan', 'equals', 'team')) });
    const old = await createSegment();
    await makeOldFormat(old.id);
    const list = await idList();
    await post(`${BASE}/${list.id}/members`, { add: ['u-9'] });
    const segment_ids = [pro.id, team.id, old.id, list.id, MISSING_ID];
    const res = await post(`${BASE}/bulk-evaluate`, { user_context: { user_id: 'u-9', plan: 'pro', country: 'US' }, segment_ids }, viewer);
    expect(res.json()).toEqual({ results: { [pro.id]: true, [team.id]: false, [old.id]: false, [list.id]: true, [MISSING_ID]: false } });
    const tooMany = await post(`${BASE}/bulk-evaluate`, { user_context: {}, segment_ids: Array.from({ length: 51 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`) }, viewer);
    expect(tooMany.json().detail[0]).toMatchObject({ type: 'too_long', loc: ['body', 'segment_ids'] });
    expect((await t.inject({ method: 'POST', url: `${BASE}/bulk-evaluate`, payload: { user_context: {}, segment_ids } })).statusCode).toBe(401);
  });
});

describe('preview', () => {
  it('estimates the share of stored assignment contexts the rules match', async () => {
    const segment = await createSegment();
    const noData = await post(`${BASE}/${segment.id}/preview`, {}, viewer);
    expect([noData.statusCode, noData.json()]).toEqual([200, { estimated_percentage: 0, sample_size: 0, matched: 0 }]);
    const exp = await experiment(t, dev);
    const key = await t.apiKey(dev);
    for (const [user_id, plan] of [['p1', 'pro'], ['p2', 'free'], ['p3', 'free']]) {
      const res = await t.inject({ method: 'POST', url: '/api/v1/tracking/assign', headers: key.headers, payload: { experiment_key: exp.key, user_id, context: { plan, country: 'US' } } });
      expect(res.statusCode).toBe(200);
    }
    const res = await post(`${BASE}/${segment.id}/preview?sample_size=10`, {}, viewer);
    expect(res.json()).toEqual({ estimated_percentage: 33.33, sample_size: 3, matched: 1 });
    const sent = await post(`${BASE}/${segment.id}/preview?sample_size=10`, { rules: rules(condition('plan', 'equals', 'free')) }, viewer);
    expect(sent.json()).toEqual({ estimated_percentage: 66.67, sample_size: 3, matched: 2 });
  });

  it('refuses work beyond its limits at query.sample_size, bad rules at body.rules, and id lists without rules', async () => {
    const segment = await createSegment();
    const regex = rules(condition('email', 'regex', '@example\\.com$'));
    const over = await post(`${BASE}/${segment.id}/preview`, { rules: regex }, viewer);
    expect(over.json()).toEqual({ detail: [{ type: 'value_error', loc: ['query', 'sample_size'], msg: PREVIEW_TOO_MANY_REGEX }] });
    expect((await post(`${BASE}/${segment.id}/preview?sample_size=500`, { rules: regex }, viewer)).statusCode).toBe(200);
    const wide = { logical_operator: 'OR', groups: Array.from({ length: 10 }, () => ({ logical_operator: 'AND', conditions: Array(4).fill(condition('a', 'equals', 1)) })) };
    const nodes = await post(`${BASE}/${segment.id}/preview?sample_size=1001`, { rules: wide }, viewer);
    expect(nodes.json()).toEqual({ detail: [{ type: 'value_error', loc: ['query', 'sample_size'], msg: PREVIEW_TOO_MANY_NODES }] });
    expect((await post(`${BASE}/${segment.id}/preview?sample_size=1000`, { rules: wide }, viewer)).statusCode).toBe(200);
    expect((await post(`${BASE}/${segment.id}/preview?sample_size=9`, {}, viewer)).json().detail[0]).toMatchObject({ type: 'greater_than_equal', loc: ['query', 'sample_size'] });
    expect((await post(`${BASE}/${segment.id}/preview?sample_size=10001`, {}, viewer)).json().detail[0]).toMatchObject({ type: 'less_than_equal', loc: ['query', 'sample_size'] });
    expect((await post(`${BASE}/${segment.id}/preview`, { rules: { logical_operator: 'AND', groups: [] } }, viewer)).json()).toEqual(rulesError(SEGMENT_RULE_MESSAGES.noGroups));
    const list = await idList();
    const res = await post(`${BASE}/${list.id}/preview`, {}, viewer);
    expect([res.statusCode, res.json()]).toEqual([422, rulesError(NO_RULES_TO_PREVIEW)]);
    expect((await post(`${BASE}/${MISSING_ID}/preview`, {}, viewer)).statusCode).toBe(404);
  });
});

describe('members (beta)', () => {
  it('adds and removes ids, counting repeats once, with one audit entry holding counts only', async () => {
    const list = await idList();
    const added = await post(`${BASE}/${list.id}/members`, { add: ['a', 'b', 'b', 'c'] });
    expect([added.statusCode, added.json()]).toEqual([200, { added: 3, already_members: 0, member_count: 3 }]);
    expect((await post(`${BASE}/${list.id}/members`, { add: ['c', 'd', 'A'] })).json()).toEqual({ added: 2, already_members: 1, member_count: 5 });
    expect((await post(`${BASE}/${list.id}/members/remove`, { remove: ['a', 'a', 'zz'] })).json()).toEqual({ removed: 1, not_members: 1, member_count: 4 });
    expect((await read(list.id)).member_count).toBe(4);
    const [entry] = await t.database.session((exec) =>
      exec<{ action: string; before: unknown; after: unknown; details: unknown }>(
        `SELECT action, before, after, details FROM audit_logs WHERE entity_id = $1 ORDER BY created_at DESC LIMIT 1`, [list.id],
      ),
    );
    expect(entry).toEqual({ action: 'segment_update', before: null, after: null, details: { members: { removed: 1, not_members: 1, member_count: 4 } } });
  });

  it('takes 10,000 ids in one request', async () => {
    const list = await idList();
    const ids = Array.from({ length: 10_000 }, (_, i) => `user-${i}`);
    expect((await post(`${BASE}/${list.id}/members`, { add: ids })).json()).toEqual({ added: 10_000, already_members: 0, member_count: 10_000 });
    const res = await post(`${BASE}/${list.id}/members`, { add: [...ids.slice(5000), 'x'.repeat(255)] });
    expect(res.json()).toEqual({ added: 1, already_members: 5000, member_count: 10_001 });
  });

  it('refuses beyond 1,000,000 ids per segment, adding nothing', async () => {
    const list = await idList();
    await post(`${BASE}/${list.id}/members`, { add: ['first'] });
    // A million rows would make the test slow: the stored count is what the cap reads, so it is raised directly.
    await t.database.exec(`UPDATE segments SET member_count = 999999 WHERE id = '${list.id}'`);
    const over = await post(`${BASE}/${list.id}/members`, { add: ['first', 'x', 'y'] });
    expect([over.statusCode, over.json()]).toEqual([422, { detail: [{ type: 'value_error', loc: ['body', 'add'], msg: TOO_MANY_MEMBERS }] }]);
    expect((await read(list.id)).member_count).toBe(999_999);
    expect((await post(`${BASE}/${list.id}/members/remove`, { remove: ['x', 'y'] })).json()).toMatchObject({ removed: 0, not_members: 2 });
    expect((await post(`${BASE}/${list.id}/members`, { add: ['x'] })).json()).toEqual({ added: 1, already_members: 0, member_count: 1_000_000 });
  });

  it('refuses bad bodies, rules segments, archived segments, unknown segments and low roles', async () => {
    const list = await idList();
    const tooMany = await post(`${BASE}/${list.id}/members`, { add: Array.from({ length: 10_001 }, (_, i) => `u${i}`) });
    expect(tooMany.json().detail[0]).toMatchObject({ type: 'too_long', loc: ['body', 'add'] });
    expect((await post(`${BASE}/${list.id}/members`, { add: [] })).json().detail[0]).toMatchObject({ type: 'too_short', loc: ['body', 'add'] });
    expect((await post(`${BASE}/${list.id}/members`, { add: ['x'.repeat(256)] })).json().detail[0]).toMatchObject({ type: 'string_too_long', loc: ['body', 'add', 0] });
    expect((await post(`${BASE}/${list.id}/members`, { add: [''] })).json().detail[0]).toMatchObject({ type: 'string_too_short' });
    expect((await post(`${BASE}/${list.id}/members`, { add: ['a'], note: 'x' })).json().detail[0]).toMatchObject({ type: 'extra_forbidden', loc: ['body', 'note'] });
    expect((await post(`${BASE}/${list.id}/members/remove`, { add: ['a'] })).statusCode).toBe(422);
    expect((await post(`${BASE}/${list.id}/members`, { add: ['a'] }, viewer)).statusCode).toBe(403);
    expect((await t.inject({ method: 'POST', url: `${BASE}/${list.id}/members`, payload: { add: ['a'] } })).statusCode).toBe(401);
    const rulesSegment = await createSegment();
    for (const [path, body] of [['members', { add: ['a'] }], ['members/remove', { remove: ['a'] }]] as const) {
      const res = await post(`${BASE}/${rulesSegment.id}/${path}`, body);
      expect([res.statusCode, res.json()]).toEqual([409, { detail: MEMBERS_NEED_ID_LIST }]);
      expect((await post(`${BASE}/${MISSING_ID}/${path}`, body)).statusCode).toBe(404);
    }
    await t.inject({ method: 'DELETE', url: `${BASE}/${list.id}`, headers: dev.headers });
    const archived = await post(`${BASE}/${list.id}/members`, { add: ['a'] });
    expect([archived.statusCode, archived.json()]).toEqual([409, { detail: SEGMENT_ARCHIVED }]);
    expect((await read(list.id)).member_count).toBe(0);
  });
});
