import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpliftApp } from '../../src/app.js';
import { fixedClock } from '../../src/platform/clock.js';
import { RULE_MESSAGES } from '../../src/targeting/index.js';
import {
  ALLOCATIONS_SUM,
  BAYESIAN_DEFAULTS,
  ONE_CONTROL,
  ONE_PRIMARY,
  VARIANT_NAMES_UNIQUE,
} from '../../src/modules/experiments/rules.js';
import {
  CLONE_SEGMENT_NOT_USABLE,
  END_BEFORE_START,
  END_DATE_PASSED,
  EXPERIMENT_NOT_FOUND,
  KEY_TAKEN,
  SPLIT_URL_NOT_AVAILABLE,
} from '../../src/modules/experiments/service.js';
import { SEGMENT_NOT_USABLE } from '../../src/modules/segments/service.js';
import { statusChangeRefused, transitionRefused, TRANSITIONS, type Transition } from '../../src/modules/experiments/lifecycle.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

const NOW = new Date('2031-03-01T12:00:00.000Z');
const clock = fixedClock(NOW);
const BASE = '/api/v1/experiments';
const HOUR = 3_600_000;

let t: TestApp;
let admin: TestUser;
let dev: TestUser;
let analyst: TestUser;
let viewer: TestUser;
let superuser: TestUser;

beforeAll(async () => {
  t = await testApp({ clock });
  [admin, dev, analyst, viewer, superuser] = await Promise.all([
    t.user({ role: 'ADMIN' }),
    t.user({ role: 'DEVELOPER' }),
    t.user({ role: 'ANALYST' }),
    t.user({ role: 'VIEWER' }),
    t.user({ superuser: true }),
  ]);
});
afterAll(() => t.close());

type Json = Record<string, any>;

function body(over: Json = {}): Json {
  return {
    name: 'Checkout button',
    key: t.unique('exp'),
    description: 'Bigger button',
    variants: [
      { name: 'control', is_control: true, traffic_allocation: 50, configuration: { color: 'grey', size: 1 } },
      { name: 'treatment', traffic_allocation: 50, configuration: { color: 'green', size: 2 } },
    ],
    metrics: [{ name: 'Purchase', event_name: 'purchase', metric_type: 'conversion', is_primary: true, expected_effect: 0.1 }],
    ...over,
  };
}

async function create(user: TestUser = dev, over: Json = {}, app: UpliftApp['app'] = t.app): Promise<Json> {
  const res = await app.inject({ method: 'POST', url: `${BASE}/`, headers: user.headers, payload: body(over) });
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`);
  return res.json();
}

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, user?: TestUser, payload?: unknown) =>
  t.inject({ method, url, headers: user?.headers ?? {}, ...(payload === undefined ? {} : { payload: payload as Json }) });

const get = async (id: string) => (await call('GET', `${BASE}/${id}`, viewer)).json();

/** Raw rows of the audit log for one entity (the fixed clock gives them one time: compare as sets). */
async function auditOf(id: string): Promise<Array<{ action: string; actor_username: string | null }>> {
  return t.database.session((exec) =>
    exec('SELECT action, actor_username FROM audit_logs WHERE entity_id = $1 ORDER BY action', [id]),
  );
}

async function inStatus(status: string): Promise<Json> {
  const e = await create();
  const moves: Record<string, Transition[]> = {
    draft: [],
    active: ['start'],
    paused: ['start', 'pause'],
    completed: ['start', 'complete'],
    archived: ['archive'],
  };
  for (const move of moves[status]) expect((await call('POST', `${BASE}/${e.id}/${move}`, dev)).statusCode).toBe(200);
  return get(e.id);
}

const issue = (loc: unknown[], msg: string) => ({ detail: [{ type: 'value_error', loc, msg }] });

describe('create', () => {
  it('creates a draft with the defaults and the owner', async () => {
    const sent = body({ status: 'draft' });
    const res = await call('POST', `${BASE}/`, dev, sent);
    expect(res.statusCode).toBe(201);
    const e = res.json();
    expect(e).toMatchObject({
      key: sent.key,
      name: 'Checkout button',
      status: 'draft',
      experiment_type: 'a_b',
      correction_method: 'benjamini_hochberg',
      confidence_level: 0.95,
      sequential_testing_enabled: false,
      sequential_testing_config: null,
      bayesian_enabled: false,
      bayesian_config: null,
      bayesian_decision: null,
      targeting_rules: null,
      start_date: null,
      end_date: null,
      owner_id: dev.id,
      metadata: null,
    });
    expect(e).not.toHaveProperty('owner_name');
    expect(e.variants.map((v: Json) => [v.name, v.is_control, v.traffic_allocation, v.configuration])).toEqual([
      ['control', true, 50, { color: 'grey', size: 1 }],
      ['treatment', false, 50, { color: 'green', size: 2 }],
    ]);
    expect(e.metrics).toEqual([
      expect.objectContaining({ name: 'Purchase', event_name: 'purchase', metric_type: 'conversion', is_primary: true, expected_effect: 0.1 }),
    ]);
    expect(await auditOf(e.id)).toEqual([{ action: 'experiment_create', actor_username: dev.username }]);
  });

  it('lets ADMIN and a superuser without a role create; refuses ANALYST, VIEWER and anonymous callers', async () => {
    expect((await call('POST', `${BASE}/`, admin, body())).statusCode).toBe(201);
    expect((await call('POST', `${BASE}/`, superuser, body())).statusCode).toBe(201);
    for (const user of [analyst, viewer]) {
      const sent = body();
      const res = await call('POST', `${BASE}/`, user, sent);
      expect(res.statusCode).toBe(403);
      expect((await call('GET', `${BASE}/?search=${sent.key}`, viewer)).json()).toEqual([]);
    }
    expect((await call('POST', `${BASE}/`, undefined, body())).statusCode).toBe(401);
  });

  it('refuses a status other than draft, an unknown or upper-case type, and dates', async () => {
    const cases: Array<[Json, unknown[], string]> = [
      [{ status: 'active' }, ['body', 'status'], 'enum'],
      [{ experiment_type: 'A_B' }, ['body', 'experiment_type'], 'enum'],
      [{ experiment_type: 'multivariate' }, ['body', 'experiment_type'], 'enum'],
      [{ start_date: NOW.toISOString() }, ['body', 'start_date'], 'extra_forbidden'],
      [{ correction_method: 'holm' }, ['body', 'correction_method'], 'enum'],
      [{ confidence_level: 0.5 }, ['body', 'confidence_level'], 'greater_than_equal'],
      [{ confidence_level: 0.995 }, ['body', 'confidence_level'], 'less_than_equal'],
      [{ variants: [] }, ['body', 'variants'], 'too_short'],
      [{ metrics: [] }, ['body', 'metrics'], 'too_short'],
      [{ metrics: [{ name: 'm', is_primary: true }] }, ['body', 'metrics', 0, 'event_name'], 'missing'],
      [{ key: 'has space' }, ['body', 'key'], 'string_pattern_mismatch'],
      [{ bayesian_config: { prior_family: 'gaussian' } }, ['body', 'bayesian_config', 'prior_family'], 'enum'],
      [{ bayesian_config: { alpha: 0 } }, ['body', 'bayesian_config', 'alpha'], 'greater_than'],
      [{ bayesian_config: { credible_level: 1.5 } }, ['body', 'bayesian_config', 'credible_level'], 'less_than_equal'],
      [{ sequential_testing_config: { alpha: 0.3 } }, ['body', 'sequential_testing_config', 'alpha'], 'less_than_equal'],
      [{ variance_reduction_config: { covariate_metric_id: 'x' } }, ['body', 'variance_reduction_config', 'covariate_metric_id'], 'uuid_parsing'],
    ];
    for (const [over, loc, type] of cases) {
      const sent = body(over);
      const res = await call('POST', `${BASE}/`, dev, sent);
      expect(res.statusCode, JSON.stringify(over)).toBe(422);
      expect(res.json().detail, JSON.stringify(over)).toContainEqual(expect.objectContaining({ loc, type }));
    }
  });

  it('applies the variant and metric rules, and creates nothing when refused', async () => {
    const v = (name: string, traffic_allocation: number, is_control = false) => ({ name, traffic_allocation, is_control });
    const cases: Array<[Json, Json]> = [
      [{ variants: [v('a', 50), v('b', 50)] }, issue(['body', 'variants'], ONE_CONTROL)],
      [{ variants: [v('a', 50, true), v('b', 50, true)] }, issue(['body', 'variants'], ONE_CONTROL)],
      [{ variants: [v('a', 50, true), v('b', 49.9)] }, issue(['body', 'variants'], ALLOCATIONS_SUM)],
      [{ variants: [v('a', 50, true), v('a', 50)] }, issue(['body', 'variants'], VARIANT_NAMES_UNIQUE)],
      [
        { metrics: [{ name: 'a', event_name: 'a', is_primary: true }, { name: 'b', event_name: 'b', is_primary: true }] },
        issue(['body', 'metrics'], ONE_PRIMARY),
      ],
    ];
    for (const [over, expected] of cases) {
      const sent = body(over);
      const res = await call('POST', `${BASE}/`, dev, sent);
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual(expected);
      expect((await call('GET', `${BASE}/?search=${sent.key}`, viewer)).json()).toEqual([]);
    }
  });

  it('accepts allocations that add up to 100 within rounding, one variant alone, and no primary metric', async () => {
    const thirds = await create(dev, {
      variants: [
        { name: 'a', is_control: true, traffic_allocation: 33.33 },
        { name: 'b', traffic_allocation: 33.33 },
        { name: 'c', traffic_allocation: 33.34 },
      ],
    });
    expect(thirds.variants.map((x: Json) => x.name)).toEqual(['a', 'b', 'c']);
    const single = await create(dev, {
      experiment_type: 'mv',
      variants: [{ name: 'only', is_control: true, traffic_allocation: 100 }],
      metrics: [{ name: 'a', event_name: 'a' }, { name: 'b', event_name: 'b', metric_type: 'revenue' }],
    });
    expect(single.metrics.map((m: Json) => m.is_primary)).toEqual([false, false]);
  });

  it('stores the statistical settings with their defaults', async () => {
    const e = await create(dev, {
      correction_method: 'bonferroni',
      confidence_level: 0.9,
      sequential_testing_enabled: true,
      bayesian_enabled: true,
      variance_reduction_config: { covariate_metric_id: null },
    });
    expect(e).toMatchObject({
      correction_method: 'bonferroni',
      confidence_level: 0.9,
      sequential_testing_config: { alpha: 0.05 },
      bayesian_config: BAYESIAN_DEFAULTS,
      variance_reduction_config: { covariate_metric_id: null },
    });
    const partial = await create(dev, { bayesian_config: { alpha: 2, rope: 0 }, sequential_testing_config: { alpha: 0.1 } });
    expect(partial.bayesian_config).toEqual({ ...BAYESIAN_DEFAULTS, alpha: 2, rope: 0 });
    expect(partial.sequential_testing_config).toEqual({ alpha: 0.1 });
  });

  it('validates targeting rules like flags, including the segments they name', async () => {
    const rules = {
      logical_operator: 'AND',
      groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'US' }] }],
    };
    expect((await create(dev, { targeting_rules: rules })).targeting_rules).toEqual(rules);

    const bad = { ...rules, groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'near', value: 'US' }] }] };
    const sent = body({ targeting_rules: bad });
    const res = await call('POST', `${BASE}/`, dev, sent);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual(issue(['body', 'targeting_rules'], RULE_MESSAGES.unknownOperator));

    const segmentRules = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'plan', operator: 'equals', value: 'pro' }] }] };
    const inactive = await call('POST', '/api/v1/segments', dev, { name: t.unique('seg'), rules: segmentRules, status: 'inactive' });
    expect(inactive.statusCode).toBe(201);
    const active = await call('POST', '/api/v1/segments', dev, { name: t.unique('seg'), rules: segmentRules });
    const naming = (segmentId: string) => ({
      logical_operator: 'AND',
      groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'segment', operator: 'in_segment', value: segmentId }] }],
    });
    for (const segmentId of [inactive.json().id, '00000000-0000-4000-8000-000000000000']) {
      const refused = body({ targeting_rules: naming(segmentId) });
      const r = await call('POST', `${BASE}/`, dev, refused);
      expect(r.statusCode).toBe(422);
      expect(r.json()).toEqual(issue(['body', 'targeting_rules'], SEGMENT_NOT_USABLE));
      expect((await call('GET', `${BASE}/?search=${refused.key}`, viewer)).json()).toEqual([]);
    }
    expect((await create(dev, { targeting_rules: naming(active.json().id) })).targeting_rules).toEqual(naming(active.json().id));
  });

  it('tells the segments module which experiments name a segment, in any status', async () => {
    const rules = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'plan', operator: 'equals', value: 'pro' }] }] };
    const segment = (await call('POST', '/api/v1/segments', dev, { name: t.unique('seg'), rules })).json();
    const naming = {
      logical_operator: 'OR',
      groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'segment', operator: 'in_segment', value: segment.id }] }],
    };
    const mentioning = {
      logical_operator: 'AND',
      groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'note', operator: 'equals', value: segment.id }] }],
    };
    const live = await create(dev, { targeting_rules: naming });
    const done = await create(dev, { targeting_rules: naming });
    await call('POST', `${BASE}/${done.id}/archive`, dev);
    await create(dev, { targeting_rules: mentioning });
    expect(await t.services.experimentsReadModel.experimentsUsingSegment(segment.id)).toEqual(expect.arrayContaining([
      { id: live.id, key: live.key, name: live.name, status: 'draft' },
      { id: done.id, key: done.key, name: done.name, status: 'archived' },
    ]));
    expect(await t.services.experimentsReadModel.experimentsUsingSegment(segment.id)).toHaveLength(2);
  });

  it('refuses a key that is taken', async () => {
    const first = await create();
    const res = await call('POST', `${BASE}/`, admin, body({ key: first.key, name: 'Other' }));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: KEY_TAKEN });
    expect((await call('GET', `${BASE}/?search=${first.key}`, viewer)).json().map((e: Json) => e.name)).toEqual(['Checkout button']);
  });

  it('refuses split_url in the core profile (501) and stores its configuration as sent in full', async () => {
    const core = await t.spawn({ DEPLOYMENT_PROFILE: 'core' }, clock);
    const config = { variants: [{ name: 'a', url: 'https://a.example', traffic_allocation: 50 }, { name: 'b', url: 'https://b.example', traffic_allocation: 50 }] };
    const sent = body({ experiment_type: 'split_url', split_url_config: config });
    const refused = await core.app.inject({ method: 'POST', url: `${BASE}/`, headers: dev.headers, payload: sent });
    expect(refused.statusCode).toBe(501);
    expect(refused.json()).toEqual({ detail: SPLIT_URL_NOT_AVAILABLE });
    expect((await call('GET', `${BASE}/?search=${sent.key}`, viewer)).json()).toEqual([]);
    const created = await create(dev, { experiment_type: 'split_url', split_url_config: config });
    expect(created).toMatchObject({ experiment_type: 'split_url', split_url_config: config });
  });

  it('keeps the experiment type on a PUT that leaves it out, in a draft and once running', async () => {
    for (const type of ['split_url', 'bandit', 'mv']) {
      const e = await create(dev, { experiment_type: type });
      const draft = await call('PUT', `${BASE}/${e.id}`, dev, { description: 'edited' });
      expect([draft.statusCode, draft.json().experiment_type]).toEqual([200, type]);
      await call('POST', `${BASE}/${e.id}/start`, dev);
      const running = await call('PUT', `${BASE}/${e.id}`, dev, { description: 'edited again' });
      expect([running.statusCode, running.json().experiment_type]).toEqual([200, type]);
    }
  });
});

describe('read', () => {
  it('answers detail with owner_name for every role, never an email', async () => {
    const e = await create(dev);
    const res = await call('GET', `${BASE}/${e.id}`, viewer);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...e, owner_name: dev.username });

    const named = await t.user({ role: 'DEVELOPER' });
    const rename = await call('PUT', `/api/v1/users/${named.id}`, named, { username: named.username, email: named.email, full_name: 'Ada Lovelace' });
    expect(rename.statusCode).toBe(200);
    expect((await get((await create(named)).id)).owner_name).toBe('Ada Lovelace');

    const emailish = await t.user({ role: 'DEVELOPER' });
    const owned = await create(emailish);
    const update = await call('PUT', `/api/v1/users/${emailish.id}`, superuser, { username: emailish.email, email: emailish.email });
    expect(update.statusCode).toBe(200);
    expect((await get(owned.id)).owner_name).toBeNull();
    // An email as the full name falls back to the username rule.
    const nameIsEmail = await call('PUT', `/api/v1/users/${named.id}`, named, { username: named.username, email: named.email, full_name: named.email });
    expect(nameIsEmail.statusCode).toBe(200);
    expect((await get((await create(named)).id)).owner_name).toBe(named.username);

    expect((await call('DELETE', `/api/v1/users/${emailish.id}`, superuser)).statusCode).toBe(204);
    expect(await get(owned.id)).toMatchObject({ owner_id: null, owner_name: null });
  });

  it('reads the owner afresh when the detail is cached: a renamed or removed account shows at once', async () => {
    const cached = await t.spawn({ CACHE_ENABLED: 'true' }, clock);
    const detail = async (id: string) => (await cached.app.inject({ method: 'GET', url: `${BASE}/${id}`, headers: viewer.headers })).json();
    const owner = await t.user({ role: 'DEVELOPER' });
    const e = await create(owner);
    expect(await detail(e.id)).toMatchObject({ owner_id: owner.id, owner_name: owner.username });
    await call('PUT', `/api/v1/users/${owner.id}`, owner, { username: owner.username, email: owner.email, full_name: 'Grace Hopper' });
    expect(await detail(e.id)).toMatchObject({ owner_id: owner.id, owner_name: 'Grace Hopper' });
    expect((await call('DELETE', `/api/v1/users/${owner.id}`, superuser)).statusCode).toBe(204);
    expect(await detail(e.id)).toMatchObject({ owner_id: null, owner_name: null });
  });

  it('answers 401, 404 and 422 for a bad id', async () => {
    const e = await create();
    expect((await call('GET', `${BASE}/${e.id}`)).statusCode).toBe(401);
    const missing = await call('GET', `${BASE}/00000000-0000-4000-8000-000000000000`, viewer);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: EXPERIMENT_NOT_FOUND });
    const bad = await call('GET', `${BASE}/not-a-uuid`, viewer);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail).toEqual([expect.objectContaining({ type: 'uuid_parsing', loc: ['path', 'experiment_id'] })]);
  });

  it('lists with status filter, search over name, key and description, sorting and paging', async () => {
    const tag = t.unique('tag').toLowerCase();
    const a = await create(dev, { name: `Alpha ${tag}` });
    const b = await create(dev, { name: 'Beta', key: `${tag}-key` });
    const c = await create(dev, { name: 'Gamma', description: `About ${tag.toUpperCase()}` });
    await call('POST', `${BASE}/${b.id}/start`, dev);
    const names = async (query: string) => {
      const res = await call('GET', `${BASE}/?search=${tag}&${query}`, analyst);
      expect(res.statusCode).toBe(200);
      return res.json().map((e: Json) => e.name);
    };
    expect(await names('sort_by=name&sort_order=asc')).toEqual([a.name, 'Beta', 'Gamma']);
    expect(await names('sort_by=name&sort_order=desc')).toEqual(['Gamma', 'Beta', a.name]);
    expect(await names('status_filter=active')).toEqual(['Beta']);
    expect(await names('sort_by=name&sort_order=asc&skip=1&limit=1')).toEqual(['Beta']);
    expect((await call('GET', `${BASE}/?search=${tag}`, viewer)).json().map((e: Json) => e.id).sort()).toEqual([a.id, b.id, c.id].sort());
    expect((await call('GET', `${BASE}/?search=%25`, viewer)).statusCode).toBe(200);
    for (const query of ['limit=501', 'limit=0', 'skip=-1', 'status_filter=running', 'sort_by=owner', 'sort_order=up']) {
      expect((await call('GET', `${BASE}/?${query}`, viewer)).statusCode, query).toBe(422);
    }
    expect((await call('GET', `${BASE}/?limit=500`, viewer)).statusCode).toBe(200);
    expect((await call('GET', `${BASE}/`)).statusCode).toBe(401);
  });
});

describe('update', () => {
  it('changes fields, replaces metrics when sent, and leaves the rest', async () => {
    const e = await create();
    const res = await call('PUT', `${BASE}/${e.id}`, dev, {
      name: 'Renamed',
      hypothesis: 'Green sells',
      metrics: [{ name: 'Revenue', event_name: 'revenue', metric_type: 'revenue', is_primary: true, expected_effect: 0.05 }],
    });
    expect(res.statusCode).toBe(200);
    const updated = res.json();
    expect(updated).toMatchObject({ name: 'Renamed', hypothesis: 'Green sells', description: e.description, variants: e.variants });
    expect(updated.metrics).toEqual([expect.objectContaining({ name: 'Revenue', expected_effect: 0.05 })]);
    expect(updated.metrics[0].id).not.toBe(e.metrics[0].id);
    const again = await call('PUT', `${BASE}/${e.id}`, admin, { description: null });
    expect(again.json()).toMatchObject({ description: null, metrics: updated.metrics });
    expect((await auditOf(e.id)).map((a) => a.action).sort()).toEqual(['experiment_create', 'experiment_update', 'experiment_update']);
  });

  it('answers 401, 403 for ANALYST and VIEWER, 404, 422, and changes nothing then', async () => {
    const e = await create();
    expect((await call('PUT', `${BASE}/${e.id}`, undefined, { name: 'x' })).statusCode).toBe(401);
    for (const user of [analyst, viewer]) expect((await call('PUT', `${BASE}/${e.id}`, user, { name: 'x' })).statusCode).toBe(403);
    expect((await call('PUT', `${BASE}/00000000-0000-4000-8000-000000000000`, dev, { name: 'x' })).statusCode).toBe(404);
    expect((await call('PUT', `${BASE}/nope`, dev, { name: 'x' })).statusCode).toBe(422);
    const extra = await call('PUT', `${BASE}/${e.id}`, dev, { name: 'x', owner_id: dev.id });
    expect(extra.statusCode).toBe(422);
    const rules = await call('PUT', `${BASE}/${e.id}`, dev, { name: 'x', variants: [{ name: 'a', is_control: true, traffic_allocation: 90 }] });
    expect(rules.json()).toEqual(issue(['body', 'variants'], ALLOCATIONS_SUM));
    const nulls = await call('PUT', `${BASE}/${e.id}`, dev, { name: null });
    expect(nulls.json().detail).toEqual([expect.objectContaining({ type: 'null_not_allowed', loc: ['body', 'name'] })]);
    expect(await get(e.id)).toEqual({ ...e, owner_name: dev.username });
  });

  it('fixes correction_method and confidence_level after draft, even re-sent unchanged', async () => {
    const e = await create();
    const draftChange = await call('PUT', `${BASE}/${e.id}`, dev, { correction_method: 'none', confidence_level: 0.9 });
    expect(draftChange.json()).toMatchObject({ correction_method: 'none', confidence_level: 0.9 });
    await call('POST', `${BASE}/${e.id}/start`, dev);
    for (const [field, value] of [['correction_method', 'none'], ['correction_method', 'bonferroni'], ['confidence_level', 0.9]] as const) {
      const res = await call('PUT', `${BASE}/${e.id}`, dev, { name: 'Changed', [field]: value });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ detail: `Cannot update ${field} for experiments in active status` });
    }
    await call('POST', `${BASE}/${e.id}/pause`, dev);
    const paused = await call('PUT', `${BASE}/${e.id}`, dev, { correction_method: 'none' });
    expect(paused.json()).toEqual({ detail: 'Cannot update correction_method for experiments in paused status' });
    expect(await get(e.id)).toMatchObject({ name: e.name, correction_method: 'none', confidence_level: 0.9 });
  });

  it('keeps key, type and variants once started unless re-sent unchanged', async () => {
    const e = await create();
    const newKey = t.unique('renamed');
    expect((await call('PUT', `${BASE}/${e.id}`, dev, { key: newKey })).json().key).toBe(newKey);
    await call('POST', `${BASE}/${e.id}/start`, dev);
    const started = await get(e.id);
    const same = await call('PUT', `${BASE}/${e.id}`, dev, {
      key: newKey,
      experiment_type: 'a_b',
      variants: [
        { name: 'control', is_control: true, traffic_allocation: 50, configuration: { size: 1, color: 'grey' } },
        { name: 'treatment', traffic_allocation: 50, configuration: { size: 2, color: 'green' } },
      ],
    });
    expect(same.statusCode).toBe(200);
    expect(same.json().variants).toEqual(started.variants);
    const changes: Array<[string, Json]> = [
      ['key', { key: t.unique('other') }],
      ['experiment_type', { experiment_type: 'mv' }],
      ['variants', { variants: [{ name: 'control', is_control: true, traffic_allocation: 100 }] }],
    ];
    for (const [field, change] of changes) {
      const res = await call('PUT', `${BASE}/${e.id}`, dev, change);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ detail: `Cannot update ${field} for experiments in active status` });
    }
    expect(await get(e.id)).toEqual(started);
  });

  it('refuses a taken key and a status change through PUT', async () => {
    const [a, b] = [await create(), await create()];
    const taken = await call('PUT', `${BASE}/${a.id}`, dev, { key: b.key });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toEqual({ detail: KEY_TAKEN });
    const status = await call('PUT', `${BASE}/${a.id}`, dev, { status: 'active' });
    expect(status.statusCode).toBe(409);
    expect(status.json()).toEqual({ detail: statusChangeRefused('draft') });
    expect((await call('PUT', `${BASE}/${a.id}`, dev, { status: 'draft', name: 'Same status' })).statusCode).toBe(200);
    expect(await get(a.id)).toMatchObject({ key: a.key, status: 'draft' });
  });

  it('recomputes analysis configs: enabling without one stores the defaults', async () => {
    const e = await create();
    const res = await call('PUT', `${BASE}/${e.id}`, dev, { bayesian_enabled: true, sequential_testing_enabled: true });
    expect(res.json()).toMatchObject({ bayesian_config: BAYESIAN_DEFAULTS, sequential_testing_config: { alpha: 0.05 } });
    const custom = await call('PUT', `${BASE}/${e.id}`, dev, { bayesian_config: { loss_threshold: 0.002 } });
    expect(custom.json().bayesian_config).toEqual({ ...BAYESIAN_DEFAULTS, loss_threshold: 0.002 });
  });
});

describe('delete', () => {
  it('deletes drafts only, for ADMIN and DEVELOPER', async () => {
    const e = await create();
    for (const user of [analyst, viewer]) expect((await call('DELETE', `${BASE}/${e.id}`, user)).statusCode).toBe(403);
    expect((await call('DELETE', `${BASE}/${e.id}`)).statusCode).toBe(401);
    expect((await call('DELETE', `${BASE}/${e.id}`, admin)).statusCode).toBe(204);
    expect((await call('GET', `${BASE}/${e.id}`, viewer)).statusCode).toBe(404);
    expect((await call('DELETE', `${BASE}/${e.id}`, admin)).statusCode).toBe(404);
    expect((await call('DELETE', `${BASE}/x`, admin)).statusCode).toBe(422);
    const active = await inStatus('active');
    const refused = await call('DELETE', `${BASE}/${active.id}`, dev);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ detail: transitionRefused('delete', 'active') });
    expect(await get(active.id)).toEqual(active);
  });
});

describe('lifecycle', () => {
  it('follows the transition table from every state, with a 409 naming the current status otherwise', async () => {
    const states = ['draft', 'active', 'paused', 'completed', 'archived'] as const;
    const moves = ['start', 'pause', 'complete', 'archive'] as const;
    for (const state of states) {
      for (const move of moves) {
        const e = await inStatus(state);
        const entries = (await auditOf(e.id)).length;
        const res = await call('POST', `${BASE}/${e.id}/${move}`, dev);
        const allowed = TRANSITIONS[move].from.includes(state);
        expect(res.statusCode, `${move} from ${state}`).toBe(allowed ? 200 : 409);
        const actions = (await auditOf(e.id)).map((a) => a.action);
        if (allowed) {
          expect(res.json().status).toBe(TRANSITIONS[move].to);
          expect(actions.length).toBe(entries + 1);
          expect(actions).toContain(move === 'start' && state === 'paused' ? 'experiment_resume' : `experiment_${move}`);
        } else {
          expect(res.json()).toEqual({ detail: `Cannot ${move} an experiment in ${state} status` });
          expect(actions.length).toBe(entries);
          expect(await get(e.id)).toEqual(e);
        }
      }
    }
  });

  it('refuses every change to ANALYST and VIEWER, and answers 401, 404 and 422', async () => {
    const e = await create();
    const changes: Array<[string, string, unknown]> = [
      ['POST', 'start', undefined],
      ['POST', 'pause', undefined],
      ['POST', 'complete', undefined],
      ['POST', 'archive', undefined],
      ['POST', 'clone', undefined],
      ['POST', 'metadata', { note: 'x' }],
      ['PUT', 'schedule', { end_date: new Date(NOW.getTime() + HOUR).toISOString() }],
    ];
    for (const [method, path, payload] of changes) {
      for (const user of [analyst, viewer]) {
        expect((await call(method as 'POST', `${BASE}/${e.id}/${path}`, user, payload)).statusCode, path).toBe(403);
      }
      expect((await call(method as 'POST', `${BASE}/${e.id}/${path}`, undefined, payload)).statusCode, path).toBe(401);
      expect((await call(method as 'POST', `${BASE}/00000000-0000-4000-8000-000000000000/${path}`, dev, payload)).statusCode, path).toBe(404);
      expect((await call(method as 'POST', `${BASE}/bad/${path}`, dev, payload)).statusCode, path).toBe(422);
    }
    expect(await get(e.id)).toEqual({ ...e, owner_name: dev.username });
  });

  it('starts now when the scheduled start is ahead, keeps a passed start and the scheduled end', async () => {
    const future = await create();
    const end = new Date(NOW.getTime() + 48 * HOUR).toISOString();
    await call('PUT', `${BASE}/${future.id}/schedule`, dev, { start_date: new Date(NOW.getTime() + HOUR).toISOString(), end_date: end });
    const started = (await call('POST', `${BASE}/${future.id}/start`, dev)).json();
    expect(started).toMatchObject({ status: 'active', start_date: '2031-03-01T12:00:00.000000Z', end_date: '2031-03-03T12:00:00.000000Z' });

    const past = await create();
    await call('PUT', `${BASE}/${past.id}/schedule`, dev, { start_date: '2031-02-27T08:30:00.123456Z' });
    expect((await call('POST', `${BASE}/${past.id}/start`, dev)).json().start_date).toBe('2031-02-27T08:30:00.123456Z');

    clock.advance(5 * 60_000);
    const paused = (await call('POST', `${BASE}/${past.id}/pause`, dev)).json();
    const resumed = (await call('POST', `${BASE}/${past.id}/start`, dev)).json();
    expect(resumed).toMatchObject({ status: 'active', start_date: paused.start_date });
  });

  it('refuses to start a draft whose scheduled end has passed', async () => {
    const e = await create();
    await call('PUT', `${BASE}/${e.id}/schedule`, dev, { start_date: '2020-01-01T00:00:00Z', end_date: '2020-02-01T00:00:00Z' });
    const res = await call('POST', `${BASE}/${e.id}/start`, dev);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: END_DATE_PASSED });
    expect((await get(e.id)).status).toBe('draft');
  });

  it('completes at now, and moves a start_date after now to one microsecond before the end', async () => {
    const e = await inStatus('active');
    const completed = (await call('POST', `${BASE}/${e.id}/complete`, dev)).json();
    expect(completed).toMatchObject({ status: 'completed', start_date: e.start_date, end_date: clock.now().toISOString().replace('Z', '000Z') });

    const early = await inStatus('active');
    // An older version could start an experiment with a start_date in the future; the API cannot reach that state.
    await t.database.session((exec) =>
      exec(`UPDATE experiments SET start_date = $1 WHERE id = $2`, [new Date(clock.now().getTime() + 24 * HOUR).toISOString(), early.id]),
    );
    const res = await call('POST', `${BASE}/${early.id}/complete`, dev);
    expect(res.statusCode).toBe(200);
    const endMs = clock.now().getTime();
    expect(res.json()).toMatchObject({
      status: 'completed',
      end_date: new Date(endMs).toISOString().replace('Z', '000Z'),
      start_date: new Date(endMs - 1).toISOString().replace('Z', '999Z'),
    });
  });
});

describe('schedule', () => {
  it('sets dates on a draft and requires the end after the start', async () => {
    const e = await create();
    const start = '2031-04-01T00:00:00.000Z';
    const end = '2031-05-01T00:00:00+02:00';
    const res = await call('PUT', `${BASE}/${e.id}/schedule`, dev, { start_date: start, end_date: end });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ start_date: '2031-04-01T00:00:00.000000Z', end_date: '2031-04-30T22:00:00.000000Z' });
    const backwards = await call('PUT', `${BASE}/${e.id}/schedule`, dev, { end_date: '2031-03-31T00:00:00Z' });
    expect(backwards.statusCode).toBe(422);
    expect(backwards.json()).toEqual(issue(['body', 'end_date'], END_BEFORE_START));
    const equal = await call('PUT', `${BASE}/${e.id}`, dev, { start_date: '2031-05-01T00:00:00Z', end_date: '2031-05-01T00:00:00Z' });
    expect(equal.json()).toEqual(issue(['body', 'end_date'], END_BEFORE_START));
    expect((await call('PUT', `${BASE}/${e.id}/schedule`, dev, { start_date: 'tomorrow' })).statusCode).toBe(422);
    expect((await call('PUT', `${BASE}/${e.id}/schedule`, dev, { start_date: start, extra: 1 })).statusCode).toBe(422);
    expect(await get(e.id)).toMatchObject({ start_date: '2031-04-01T00:00:00.000000Z', end_date: '2031-04-30T22:00:00.000000Z' });
    const cleared = await call('PUT', `${BASE}/${e.id}/schedule`, dev, { start_date: null, end_date: null });
    expect(cleared.json()).toMatchObject({ start_date: null, end_date: null });
  });

  it('stores years before 100 as sent and refuses a date before the year 1', async () => {
    const e = await create();
    const early = await call('PUT', `${BASE}/${e.id}/schedule`, dev, { start_date: '0050-06-01T00:00:00Z', end_date: '0099-02-28T23:00:00-02:00' });
    expect(early.json()).toMatchObject({ start_date: '0050-06-01T00:00:00.000000Z', end_date: '0099-03-01T01:00:00.000000Z' });
    expect((await call('PUT', `${BASE}/${e.id}`, dev, { start_date: '0001-01-01T00:00:00Z' })).json().start_date).toBe('0001-01-01T00:00:00.000000Z');
    for (const start of ['0000-06-01T00:00:00Z', '0001-01-01T00:30:00+01:00']) {
      const res = await call('PUT', `${BASE}/${e.id}/schedule`, dev, { start_date: start });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail).toEqual([expect.objectContaining({ type: 'datetime_from_date_parsing', loc: ['body', 'start_date'] })]);
    }
    expect((await get(e.id)).start_date).toBe('0001-01-01T00:00:00.000000Z');
  });

  it('keeps start_date once started and schedules nothing on finished experiments', async () => {
    const e = await inStatus('active');
    const start = await call('PUT', `${BASE}/${e.id}/schedule`, dev, { start_date: '2031-06-01T00:00:00Z' });
    expect(start.statusCode).toBe(400);
    expect(start.json()).toEqual({ detail: 'Cannot update start_date for experiments in active status' });
    const end = await call('PUT', `${BASE}/${e.id}/schedule`, dev, { end_date: '2031-06-01T00:00:00Z', start_date: e.start_date });
    expect(end.json()).toMatchObject({ start_date: e.start_date, end_date: '2031-06-01T00:00:00.000000Z' });
    const done = await inStatus('completed');
    const refused = await call('PUT', `${BASE}/${done.id}/schedule`, dev, { end_date: '2031-06-01T00:00:00Z' });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ detail: 'Cannot schedule an experiment in completed status' });
    expect(await get(done.id)).toEqual(done);
  });
});

describe('clone and metadata', () => {
  it('clones into a draft with a new key and the statistical settings', async () => {
    const source = await create(dev, { correction_method: 'bonferroni', confidence_level: 0.9, bayesian_enabled: true });
    await call('POST', `${BASE}/${source.id}/start`, dev);
    const res = await call('POST', `${BASE}/${source.id}/clone`, admin);
    expect(res.statusCode).toBe(201);
    const copy = res.json();
    expect(copy).toMatchObject({
      key: `${source.key}-copy`,
      name: 'Checkout button (copy)',
      status: 'draft',
      start_date: null,
      owner_id: admin.id,
      correction_method: 'bonferroni',
      confidence_level: 0.9,
      bayesian_config: BAYESIAN_DEFAULTS,
    });
    expect(copy.metrics.map((m: Json) => [m.name, m.is_primary, m.expected_effect])).toEqual([['Purchase', true, 0.1]]);
    expect(copy.variants.map((v: Json) => v.name)).toEqual(['control', 'treatment']);
    expect(copy.variants[0].id).not.toBe(source.variants[0].id);
    expect((await call('POST', `${BASE}/${source.id}/clone`, dev)).json().key).toBe(`${source.key}-copy-2`);
    const long = await create(dev, { key: 'k'.repeat(100) });
    expect((await call('POST', `${BASE}/${long.id}/clone`, dev)).json().key).toBe(`${'k'.repeat(95)}-copy`);
  });

  it('refuses to clone rules that name a segment no longer usable', async () => {
    const rules = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'plan', operator: 'equals', value: 'pro' }] }] };
    const segment = (await call('POST', '/api/v1/segments', dev, { name: t.unique('seg'), rules })).json();
    const e = await create(dev, {
      targeting_rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'segment', operator: 'not_in_segment', value: segment.id }] }] },
    });
    // The segments module refuses to deactivate a segment a draft uses; the clone rule covers it becoming unusable anyway.
    await t.database.session((exec) => exec(`UPDATE segments SET status = 'inactive' WHERE id = $1`, [segment.id]));
    const res = await call('POST', `${BASE}/${e.id}/clone`, dev);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: CLONE_SEGMENT_NOT_USABLE });
    expect((await call('GET', `${BASE}/?search=${e.key}-copy`, viewer)).json()).toEqual([]);
  });

  it('stores annotations, merged, a null removing a key', async () => {
    const e = await create();
    const first = await call('POST', `${BASE}/${e.id}/metadata`, dev, { note: 'launch review', tickets: ['UP-1'] });
    expect(first.statusCode).toBe(200);
    expect(first.json().metadata).toEqual({ note: 'launch review', tickets: ['UP-1'] });
    const second = await call('POST', `${BASE}/${e.id}/metadata`, admin, { note: null, owner_team: 'growth' });
    expect(second.json().metadata).toEqual({ tickets: ['UP-1'], owner_team: 'growth' });
    expect((await get(e.id)).metadata).toEqual({ tickets: ['UP-1'], owner_team: 'growth' });
    expect((await call('POST', `${BASE}/${e.id}/metadata`, dev, ['not', 'an', 'object'])).statusCode).toBe(422);
    expect((await auditOf(e.id)).map((a) => a.action).sort()).toEqual(['experiment_create', 'experiment_metadata_update', 'experiment_metadata_update']);
  });
});

describe('cache', () => {
  it('serves detail from the cache when enabled and clears it on every change', async () => {
    const cached = await t.spawn({ CACHE_ENABLED: 'true' }, clock);
    const e = await create();
    const read = async () => (await cached.app.inject({ method: 'GET', url: `${BASE}/${e.id}`, headers: viewer.headers })).json();
    expect((await read()).name).toBe(e.name);
    // A write behind the service's back shows what the cache holds.
    await t.database.session((exec) => exec(`UPDATE experiments SET name = 'Behind the back' WHERE id = $1`, [e.id]));
    expect((await read()).name).toBe(e.name);
    expect((await get(e.id)).name).toBe('Behind the back');

    const put = await cached.app.inject({ method: 'PUT', url: `${BASE}/${e.id}`, headers: dev.headers, payload: { description: 'new' } });
    expect(put.statusCode).toBe(200);
    expect(await read()).toMatchObject({ name: 'Behind the back', description: 'new' });
    await cached.app.inject({ method: 'POST', url: `${BASE}/${e.id}/start`, headers: dev.headers });
    expect((await read()).status).toBe('active');
  });
});
