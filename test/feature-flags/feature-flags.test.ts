import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARCHIVED_CANNOT_TURN_ON, FLAG_KEY_TAKEN, FLAG_NOT_FOUND } from '../../src/modules/feature-flags/service.js';
import { SEGMENT_NOT_USABLE } from '../../src/modules/segments/service.js';
import { RULE_MESSAGES } from '../../src/targeting/index.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let admin: TestUser;
let dev: TestUser;
let analyst: TestUser;
let viewer: TestUser;
const BASE = '/api/v1/feature-flags';
const MISSING_ID = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  t = await testApp();
  [admin, dev, analyst, viewer] = await Promise.all([
    t.user({ role: 'ADMIN' }),
    t.user({ role: 'DEVELOPER' }),
    t.user({ role: 'ANALYST' }),
    t.user({ role: 'VIEWER' }),
  ]);
});
afterAll(() => t.close());

const rules = (...conditions: object[]) => ({ logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions }] });

async function createFlag(user: TestUser, body: Record<string, unknown> = {}) {
  const res = await t.inject({ method: 'POST', url: `${BASE}/`, headers: user.headers, payload: { key: t.unique('flag'), name: 'A flag', ...body } });
  if (res.statusCode !== 201) throw new Error(`create flag: ${res.statusCode} ${res.body}`);
  return res.json();
}

async function archiveFlag(id: string) {
  const res = await t.inject({ method: 'POST', url: `${BASE}/bulk-toggle`, headers: dev.headers, payload: { ids: [id], action: 'archive' } });
  expect(res.json().results).toEqual([{ id, success: true, error: null }]);
}

async function createSegment(body: Record<string, unknown> = {}) {
  const res = await t.inject({
    method: 'POST', url: '/api/v1/segments', headers: dev.headers,
    payload: { name: t.unique('seg'), rules: rules({ attribute: 'plan', operator: 'equals', value: 'pro' }), ...body },
  });
  if (res.statusCode !== 201) throw new Error(`create segment: ${res.statusCode} ${res.body}`);
  return res.json();
}

const readFlag = async (id: string) => (await t.inject({ method: 'GET', url: `${BASE}/${id}`, headers: viewer.headers })).json();
const countByKey = async (key: string) =>
  (await t.inject({ method: 'GET', url: `${BASE}/?search=${key}`, headers: viewer.headers })).json().total as number;

describe('create', () => {
  it('creates an inactive flag with defaults unless is_active is sent', async () => {
    const key = t.unique('flag');
    const res = await t.inject({ method: 'POST', url: `${BASE}/`, headers: dev.headers, payload: { key, name: 'Checkout' } });
    expect(res.statusCode).toBe(201);
    const flag = res.json();
    expect(flag).toEqual({
      id: expect.any(String), key, name: 'Checkout', description: null, status: 'inactive', is_active: false,
      rollout_percentage: 0, targeting_rules: null, default_value: false, tags: null, owner_id: dev.id,
      created_at: expect.any(String), updated_at: expect.any(String),
    });
    const on = await createFlag(admin, { is_active: true, rollout_percentage: 40, tags: ['checkout'], description: 'd', default_value: false });
    expect(on).toMatchObject({ status: 'active', is_active: true, rollout_percentage: 40, tags: ['checkout'], description: 'd' });
  });

  it('returns targeting rules exactly as sent', async () => {
    const sent = { groups: [{ conditions: [{ value: 'US', operator: 'equals', attribute: 'country', ui_id: 7 }], logical_operator: 'OR' }], logical_operator: 'AND' };
    const flag = await createFlag(dev, { targeting_rules: sent });
    expect(JSON.stringify(flag.targeting_rules)).toBe(JSON.stringify(sent));
    expect(JSON.stringify((await readFlag(flag.id)).targeting_rules)).toBe(JSON.stringify(sent));
  });

  it('needs a sign-in and the ADMIN or DEVELOPER role', async () => {
    const key = t.unique('flag');
    expect((await t.inject({ method: 'POST', url: `${BASE}/`, payload: { key, name: 'x' } })).statusCode).toBe(401);
    for (const user of [analyst, viewer]) {
      const res = await t.inject({ method: 'POST', url: `${BASE}/`, headers: user.headers, payload: { key, name: 'x' } });
      expect(res.statusCode).toBe(403);
    }
    expect(await countByKey(key)).toBe(0);
  });

  it('refuses unknown fields, explicit nulls, a true default_value and out-of-range rollouts', async () => {
    const key = t.unique('flag');
    const cases: Array<[Record<string, unknown>, { type: string; loc: (string | number)[] }]> = [
      [{ colour: 'red' }, { type: 'extra_forbidden', loc: ['body', 'colour'] }],
      [{ description: null }, { type: 'null_not_allowed', loc: ['body', 'description'] }],
      [{ targeting_rules: null }, { type: 'null_not_allowed', loc: ['body', 'targeting_rules'] }],
      [{ tags: null }, { type: 'null_not_allowed', loc: ['body', 'tags'] }],
      [{ default_value: true }, { type: 'literal_error', loc: ['body', 'default_value'] }],
      [{ rollout_percentage: 101 }, { type: 'less_than_equal', loc: ['body', 'rollout_percentage'] }],
      [{ rollout_percentage: 12.5 }, { type: 'int_parsing', loc: ['body', 'rollout_percentage'] }],
      [{ is_active: 'yes' }, { type: 'bool_parsing', loc: ['body', 'is_active'] }],
      [{ key: 'has space' }, { type: 'string_pattern_mismatch', loc: ['body', 'key'] }],
    ];
    for (const [extra, issue] of cases) {
      const res = await t.inject({ method: 'POST', url: `${BASE}/`, headers: dev.headers, payload: { key, name: 'x', ...extra } });
      expect(res.statusCode, JSON.stringify(extra)).toBe(422);
      expect(res.json().detail).toEqual([expect.objectContaining(issue)]);
    }
    const missing = await t.inject({ method: 'POST', url: `${BASE}/`, headers: dev.headers, payload: { name: 'x' } });
    expect(missing.json().detail).toEqual([{ type: 'missing', loc: ['body', 'key'], msg: 'Field required' }]);
    expect(await countByKey(key)).toBe(0);
  });

  it('refuses more than 1000 groups plus conditions at body.targeting_rules', async () => {
    const key = t.unique('flag');
    const groups = Array.from({ length: 500 }, () => ({ logical_operator: 'AND', conditions: [{ attribute: 'a', operator: 'equals', value: 1 }] }));
    const atLimit = await t.inject({
      method: 'POST', url: `${BASE}/`, headers: dev.headers, payload: { key, name: 'x', targeting_rules: { logical_operator: 'OR', groups } },
    });
    expect(atLimit.statusCode).toBe(201);
    groups.push({ logical_operator: 'AND', conditions: [] });
    const res = await t.inject({
      method: 'POST', url: `${BASE}/`, headers: dev.headers, payload: { key: t.unique('flag'), name: 'x', targeting_rules: { logical_operator: 'OR', groups } },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({
      detail: [{ type: 'value_error', loc: ['body', 'targeting_rules'], msg: 'targeting rules: at most 1000 groups and conditions are allowed' }],
    });
  });

  it('refuses malformed rules with the validator sentence', async () => {
    const res = await t.inject({
      method: 'POST', url: `${BASE}/`, headers: dev.headers,
      payload: { key: t.unique('flag'), name: 'x', targeting_rules: rules({ attribute: 'a', operator: 'resembles', value: 1 }) },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual([{ type: 'value_error', loc: ['body', 'targeting_rules'], msg: RULE_MESSAGES.unknownOperator }]);
  });

  it('refuses rules naming an unknown, inactive, archived or invalid segment, or more than 10 segments', async () => {
    const inactive = await createSegment({ status: 'inactive' });
    const archived = await createSegment();
    await t.inject({ method: 'DELETE', url: `/api/v1/segments/${archived.id}`, headers: dev.headers });
    const invalid = await createSegment();
    // Old-format rules cannot be written through the API any more; they exist only in older data.
    await t.database.exec(`UPDATE segments SET rules = '{"match": "all"}' WHERE id = '${invalid.id}'`);
    const key = t.unique('flag');
    for (const segmentId of [MISSING_ID, 'seg_123', inactive.id, archived.id, invalid.id]) {
      const res = await t.inject({
        method: 'POST', url: `${BASE}/`, headers: dev.headers,
        payload: { key, name: 'x', targeting_rules: rules({ attribute: 'segment', operator: 'in_segment', value: segmentId }) },
      });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail).toEqual([{ type: 'value_error', loc: ['body', 'targeting_rules'], msg: SEGMENT_NOT_USABLE }]);
    }
    const eleven = await Promise.all(Array.from({ length: 11 }, () => createSegment()));
    const tooMany = await t.inject({
      method: 'POST', url: `${BASE}/`, headers: dev.headers,
      payload: { key, name: 'x', targeting_rules: rules(...eleven.map((s) => ({ attribute: 'segment', operator: 'in_segment', value: s.id }))) },
    });
    expect(tooMany.json().detail).toEqual([{ type: 'value_error', loc: ['body', 'targeting_rules'], msg: RULE_MESSAGES.tooManySegments }]);
    expect(await countByKey(key)).toBe(0);
  });

  it('refuses a duplicate key with 409', async () => {
    const flag = await createFlag(dev);
    const res = await t.inject({ method: 'POST', url: `${BASE}/`, headers: admin.headers, payload: { key: flag.key, name: 'again' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: FLAG_KEY_TAKEN });
  });
});

describe('read and list', () => {
  it('reads a flag; unknown is 404 and a non-UUID 422', async () => {
    const flag = await createFlag(dev);
    expect(await readFlag(flag.id)).toEqual(flag);
    expect((await t.inject({ method: 'GET', url: `${BASE}/${flag.id}` })).statusCode).toBe(401);
    const missing = await t.inject({ method: 'GET', url: `${BASE}/${MISSING_ID}`, headers: viewer.headers });
    expect([missing.statusCode, missing.json()]).toEqual([404, { detail: FLAG_NOT_FOUND }]);
    const bad = await t.inject({ method: 'GET', url: `${BASE}/not-a-uuid`, headers: viewer.headers });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'flag_id'] });
  });

  it('lists with total of all matches, search in name or key in any case, and status filters in upper case', async () => {
    const tag = t.unique('Srch').toLowerCase();
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await createFlag(dev, { key: `${tag}-${i}`, is_active: i === 0 }));
    await createFlag(dev, { name: `Named ${tag.toUpperCase()}` });
    const page = await t.inject({ method: 'GET', url: `${BASE}/?search=${tag.toUpperCase()}&limit=2&skip=1`, headers: viewer.headers });
    expect(page.statusCode).toBe(200);
    expect(page.json()).toMatchObject({ total: 4, skip: 1, limit: 2 });
    expect(page.json().items).toHaveLength(2);
    const active = await t.inject({ method: 'GET', url: `${BASE}/?search=${tag}&status=ACTIVE`, headers: analyst.headers });
    expect(active.json().items.map((f: { id: string }) => f.id)).toEqual([made[0].id]);
    const lower = await t.inject({ method: 'GET', url: `${BASE}/?status=active`, headers: viewer.headers });
    expect(lower.statusCode).toBe(422);
    expect(lower.json().detail[0]).toMatchObject({ type: 'enum', loc: ['query', 'status'] });
    const big = await t.inject({ method: 'GET', url: `${BASE}/?search=${tag}&limit=100000`, headers: viewer.headers });
    expect(big.json()).toMatchObject({ total: 4, limit: 100000 });
    expect((await t.inject({ method: 'GET', url: `${BASE}/` })).statusCode).toBe(401);
  });

  it('treats % and _ in a search literally', async () => {
    const flag = await createFlag(dev, { name: `100%_${t.unique()}` });
    const res = await t.inject({ method: 'GET', url: `${BASE}/?search=${encodeURIComponent('0%_')}`, headers: viewer.headers });
    expect(res.json().items.map((f: { id: string }) => f.id)).toContain(flag.id);
    const none = await t.inject({ method: 'GET', url: `${BASE}/?search=${encodeURIComponent(`%${t.unique()}_`)}`, headers: viewer.headers });
    expect(none.json().total).toBe(0);
  });
});

describe('update', () => {
  it('changes only the fields sent; omitting targeting_rules keeps them', async () => {
    const original = rules({ attribute: 'country', operator: 'equals', value: 'US' });
    const flag = await createFlag(dev, { targeting_rules: original, rollout_percentage: 10 });
    const res = await t.inject({ method: 'PUT', url: `${BASE}/${flag.id}`, headers: admin.headers, payload: { name: 'Renamed', rollout_percentage: 55 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Renamed', rollout_percentage: 55, targeting_rules: original, key: flag.key, status: 'inactive' });
    const cleared = await t.inject({
      method: 'PUT', url: `${BASE}/${flag.id}`, headers: dev.headers, payload: { targeting_rules: { logical_operator: 'AND', groups: [] }, is_active: true },
    });
    expect(cleared.json()).toMatchObject({ targeting_rules: { logical_operator: 'AND', groups: [] }, is_active: true, status: 'active' });
  });

  it('refuses nulls, unknown fields, other roles, unknown flags and taken keys, changing nothing', async () => {
    const flag = await createFlag(dev);
    const other = await createFlag(dev);
    const put = (user: TestUser, payload: object, id = flag.id) => t.inject({ method: 'PUT', url: `${BASE}/${id}`, headers: user.headers, payload });
    expect((await put(dev, { name: null })).json().detail).toEqual([expect.objectContaining({ type: 'null_not_allowed', loc: ['body', 'name'] })]);
    expect((await put(dev, { targeting_rules: null })).statusCode).toBe(422);
    expect((await put(dev, { status: 'ACTIVE' })).json().detail).toEqual([expect.objectContaining({ type: 'extra_forbidden', loc: ['body', 'status'] })]);
    expect((await put(analyst, { name: 'no' })).statusCode).toBe(403);
    expect((await t.inject({ method: 'PUT', url: `${BASE}/${flag.id}`, payload: { name: 'no' } })).statusCode).toBe(401);
    expect((await put(dev, { name: 'no' }, MISSING_ID)).statusCode).toBe(404);
    const taken = await put(dev, { key: other.key, name: 'no' });
    expect([taken.statusCode, taken.json()]).toEqual([409, { detail: FLAG_KEY_TAKEN }]);
    const tooBig = await put(dev, { name: 'no', targeting_rules: { logical_operator: 'AND', groups: Array(1001).fill({ logical_operator: 'AND', conditions: [] }) } });
    expect(tooBig.statusCode).toBe(422);
    expect(await readFlag(flag.id)).toEqual(flag);
  });
});

describe('status transitions', () => {
  it('activates, enables, deactivates, disables and toggles', async () => {
    const flag = await createFlag(dev);
    const post = async (verb: string) => (await t.inject({ method: 'POST', url: `${BASE}/${flag.id}/${verb}`, headers: dev.headers })).json();
    expect(await post('activate')).toMatchObject({ status: 'active', is_active: true });
    expect(await post('disable')).toMatchObject({ status: 'inactive', is_active: false });
    expect(await post('enable')).toMatchObject({ status: 'active', is_active: true });
    expect(await post('deactivate')).toMatchObject({ status: 'inactive', is_active: false });
    expect(await post('toggle')).toMatchObject({ status: 'active' });
    expect(await post('toggle')).toMatchObject({ status: 'inactive' });
  });

  it('needs ADMIN or DEVELOPER; unknown flag is 404', async () => {
    const flag = await createFlag(dev);
    for (const verb of ['activate', 'deactivate', 'enable', 'disable', 'toggle', 'unarchive']) {
      expect((await t.inject({ method: 'POST', url: `${BASE}/${flag.id}/${verb}`, headers: viewer.headers })).statusCode).toBe(403);
      expect((await t.inject({ method: 'POST', url: `${BASE}/${flag.id}/${verb}`, headers: analyst.headers })).statusCode).toBe(403);
      expect((await t.inject({ method: 'POST', url: `${BASE}/${flag.id}/${verb}` })).statusCode).toBe(401);
      const missing = await t.inject({ method: 'POST', url: `${BASE}/${MISSING_ID}/${verb}`, headers: admin.headers });
      expect([missing.statusCode, missing.json()]).toEqual([404, { detail: FLAG_NOT_FOUND }]);
    }
    expect(await readFlag(flag.id)).toEqual(flag);
  });

  it('refuses to turn an archived flag on (400, the sentence) and keeps it archived when turned off', async () => {
    const flag = await createFlag(dev, { is_active: true });
    await archiveFlag(flag.id);
    const archived = await readFlag(flag.id);
    expect(archived).toMatchObject({ status: 'archived', is_active: false });
    for (const verb of ['activate', 'enable', 'toggle']) {
      const res = await t.inject({ method: 'POST', url: `${BASE}/${flag.id}/${verb}`, headers: dev.headers });
      expect([res.statusCode, res.json()]).toEqual([400, { detail: ARCHIVED_CANNOT_TURN_ON }]);
    }
    const putOn = await t.inject({ method: 'PUT', url: `${BASE}/${flag.id}`, headers: dev.headers, payload: { is_active: true, name: 'sneaky' } });
    expect([putOn.statusCode, putOn.json()]).toEqual([400, { detail: ARCHIVED_CANNOT_TURN_ON }]);
    expect(await readFlag(flag.id)).toEqual(archived);
    for (const verb of ['deactivate', 'disable']) {
      const res = await t.inject({ method: 'POST', url: `${BASE}/${flag.id}/${verb}`, headers: dev.headers });
      expect([res.statusCode, res.json().status]).toEqual([200, 'archived']);
    }
    const putOff = await t.inject({ method: 'PUT', url: `${BASE}/${flag.id}`, headers: dev.headers, payload: { is_active: false, name: 'Retired' } });
    expect(putOff.json()).toMatchObject({ status: 'archived', name: 'Retired' });
  });

  it('unarchives to inactive with an audit entry, and returns other flags unchanged', async () => {
    const flag = await createFlag(dev, { is_active: true });
    await archiveFlag(flag.id);
    const res = await t.inject({ method: 'POST', url: `${BASE}/${flag.id}/unarchive`, headers: dev.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'inactive', is_active: false });
    const history = (await t.inject({ method: 'GET', url: `${BASE}/${flag.id}/history`, headers: admin.headers })).json();
    expect(history[0]).toMatchObject({ action: 'feature_flag_update', before: { status: 'ARCHIVED' }, after: { status: 'INACTIVE' }, actor_id: dev.id });
    const active = await createFlag(dev, { is_active: true });
    const again = await t.inject({ method: 'POST', url: `${BASE}/${active.id}/unarchive`, headers: dev.headers });
    expect(again.json()).toEqual(active);
  });
});

describe('unarchive and segments', () => {
  it('unarchives to inactive (200) even when a segment its rules name was archived meanwhile', async () => {
    const segment = await createSegment();
    const flag = await createFlag(dev, { targeting_rules: rules({ attribute: 'segment', operator: 'in_segment', value: segment.id }) });
    await archiveFlag(flag.id);
    // An archived flag does not hold its segments: the segment can be archived.
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/segments/${segment.id}`, headers: dev.headers })).statusCode).toBe(204);
    const res = await t.inject({ method: 'POST', url: `${BASE}/${flag.id}/unarchive`, headers: dev.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'inactive', is_active: false });
    const history = (await t.inject({ method: 'GET', url: `${BASE}/${flag.id}/history`, headers: admin.headers })).json();
    expect(history[0]).toMatchObject({ before: { status: 'ARCHIVED' }, after: { status: 'INACTIVE' } });
    // Turned on, it stays off for everyone while the segment is archived: nobody is in an archived segment.
    expect((await t.inject({ method: 'POST', url: `${BASE}/${flag.id}/activate`, headers: dev.headers })).statusCode).toBe(200);
    const key = await t.apiKey(dev);
    const evaluation = await t.inject({ method: 'GET', url: `${BASE}/evaluate/${flag.key}?user_id=u1`, headers: key.headers });
    expect(evaluation.json()).toMatchObject({ enabled: false, reason: 'targeting_miss' });
  });
});

describe('bulk toggle', () => {
  it('processes every flag and reports each result, refusing only archived flags on enable', async () => {
    const a = await createFlag(dev);
    const b = await createFlag(dev);
    const archived = await createFlag(dev);
    await archiveFlag(archived.id);
    const res = await t.inject({
      method: 'POST', url: `${BASE}/bulk-toggle`, headers: dev.headers, payload: { ids: [a.id, archived.id, MISSING_ID, b.id], action: 'enable' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      results: [
        { id: a.id, success: true, error: null },
        { id: archived.id, success: false, error: ARCHIVED_CANNOT_TURN_ON },
        { id: MISSING_ID, success: false, error: FLAG_NOT_FOUND },
        { id: b.id, success: true, error: null },
      ],
    });
    expect((await readFlag(a.id)).status).toBe('active');
    expect((await readFlag(archived.id)).status).toBe('archived');
    const disable = await t.inject({ method: 'POST', url: `${BASE}/bulk-toggle`, headers: admin.headers, payload: { ids: [a.id, archived.id], action: 'disable' } });
    expect(disable.json().results.map((r: { success: boolean }) => r.success)).toEqual([true, true]);
    expect((await readFlag(a.id)).status).toBe('inactive');
    expect((await readFlag(archived.id)).status).toBe('archived');
  });

  it('needs DEVELOPER or up and a valid body', async () => {
    const a = await createFlag(dev);
    const body = { ids: [a.id], action: 'archive' };
    expect((await t.inject({ method: 'POST', url: `${BASE}/bulk-toggle`, headers: analyst.headers, payload: body })).statusCode).toBe(403);
    expect((await t.inject({ method: 'POST', url: `${BASE}/bulk-toggle`, payload: body })).statusCode).toBe(401);
    const empty = await t.inject({ method: 'POST', url: `${BASE}/bulk-toggle`, headers: dev.headers, payload: { ids: [], action: 'enable' } });
    expect(empty.json().detail[0]).toMatchObject({ type: 'too_short', loc: ['body', 'ids'] });
    const verb = await t.inject({ method: 'POST', url: `${BASE}/bulk-toggle`, headers: dev.headers, payload: { ids: [a.id], action: 'toggle' } });
    expect(verb.json().detail[0]).toMatchObject({ type: 'enum', loc: ['body', 'action'] });
    expect((await readFlag(a.id)).status).toBe('inactive');
  });
});

describe('delete', () => {
  it('deletes for ADMIN or DEVELOPER only', async () => {
    const flag = await createFlag(dev);
    expect((await t.inject({ method: 'DELETE', url: `${BASE}/${flag.id}`, headers: analyst.headers })).statusCode).toBe(403);
    expect((await t.inject({ method: 'DELETE', url: `${BASE}/${flag.id}` })).statusCode).toBe(401);
    expect(await readFlag(flag.id)).toEqual(flag);
    const res = await t.inject({ method: 'DELETE', url: `${BASE}/${flag.id}`, headers: dev.headers });
    expect([res.statusCode, res.body]).toEqual([204, '']);
    expect((await t.inject({ method: 'GET', url: `${BASE}/${flag.id}`, headers: dev.headers })).statusCode).toBe(404);
    expect((await t.inject({ method: 'DELETE', url: `${BASE}/${flag.id}`, headers: dev.headers })).statusCode).toBe(404);
  });

  it('keeps the events tagged with a deleted flag, with feature_flag_id null', async () => {
    const flag = await createFlag(dev);
    const key = await t.apiKey(dev);
    const tracked = await t.inject({
      method: 'POST', url: '/api/v1/tracking/track', headers: key.headers, payload: { event_type: 'clicked', user_id: 'u1', feature_flag_key: flag.key },
    });
    expect(tracked.statusCode).toBe(200);
    const eventsOf = (where: string) => t.database.session((exec) => exec<{ feature_flag_id: string | null }>(`SELECT feature_flag_id FROM events WHERE ${where}`));
    expect(await eventsOf(`feature_flag_id = '${flag.id}'`)).toHaveLength(1);
    await t.inject({ method: 'DELETE', url: `${BASE}/${flag.id}`, headers: dev.headers });
    expect(await eventsOf(`feature_flag_id = '${flag.id}'`)).toHaveLength(0);
    expect(await eventsOf(`event_name = 'clicked' AND user_id = 'u1'`)).toEqual([{ feature_flag_id: null }]);
  });
});

describe('history', () => {
  it('shows every entry to ADMIN and ANALYST and only their own to DEVELOPER and VIEWER', async () => {
    const flag = await createFlag(dev);
    await t.inject({ method: 'PUT', url: `${BASE}/${flag.id}`, headers: admin.headers, payload: { rollout_percentage: 30 } });
    const read = (user: TestUser) => t.inject({ method: 'GET', url: `${BASE}/${flag.id}/history`, headers: user.headers });
    const all = (await read(analyst)).json();
    expect(all.map((e: { action: string }) => e.action)).toEqual(['feature_flag_update', 'feature_flag_create']);
    expect(all[0]).toMatchObject({ actor_id: admin.id, before: { rollout_percentage: 0 }, after: { rollout_percentage: 30 } });
    expect((await read(admin)).json()).toEqual(all);
    expect((await read(dev)).json().map((e: { actor_id: string }) => e.actor_id)).toEqual([dev.id]);
    expect((await read(viewer)).json()).toEqual([]);
    expect((await t.inject({ method: 'GET', url: `${BASE}/${flag.id}/history` })).statusCode).toBe(401);
    expect((await t.inject({ method: 'GET', url: `${BASE}/${MISSING_ID}/history`, headers: admin.headers })).statusCode).toBe(404);
    expect((await t.inject({ method: 'GET', url: `${BASE}/${flag.id}/history?limit=0`, headers: admin.headers })).statusCode).toBe(422);
  });

  it('records rollout changes and turn-offs made by schedules and safety', async () => {
    const flag = await createFlag(dev, { is_active: true });
    const flags = t.services.flags;
    const set = (percentage: number, turnOff = false) => async () => ({ percentage, turnOff });
    expect(await flags.changeRollout(flag.id, null, { source: 'rollout_schedule' }, set(25))).toMatchObject({ rollout_percentage: 25 });
    expect(await flags.changeRollout(flag.id, null, { source: 'safety_rollback' }, set(25, true))).toMatchObject({ status: 'inactive' });
    await expect(flags.changeRollout(flag.id, null, {}, set(101))).rejects.toThrow(RangeError);
    await expect(flags.getFlag(MISSING_ID)).rejects.toMatchObject({ statusCode: 404 });
    const history = (await t.inject({ method: 'GET', url: `${BASE}/${flag.id}/history`, headers: admin.headers })).json();
    expect(history.slice(0, 2)).toEqual([
      expect.objectContaining({ actor_id: null, before: { status: 'ACTIVE' }, after: { status: 'INACTIVE' }, details: { source: 'safety_rollback' } }),
      expect.objectContaining({ actor_id: null, after: { rollout_percentage: 25 }, details: { source: 'rollout_schedule' } }),
    ]);
  });
});
