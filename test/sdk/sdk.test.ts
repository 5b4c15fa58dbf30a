import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchesIfNoneMatch } from '../../src/modules/sdk/service.js';
import { BUCKETING } from '../../src/targeting/index.js';
import { Uplift } from '@uplift/sdk';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
let key: { headers: Record<string, string> };
let sdkKey: { headers: Record<string, string> };
const BASE = '/api/v1/feature-flags';

beforeAll(async () => {
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
  [key, sdkKey] = await Promise.all([t.apiKey(dev), t.apiKey(dev, ['sdk:ruleset'])]);
});
afterAll(() => t.close());

const rules = (...conditions: object[]) => ({ logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions }] });

async function createFlag(body: Record<string, unknown> = {}) {
  const res = await t.inject({
    method: 'POST', url: `${BASE}/`, headers: dev.headers, payload: { key: t.unique('flag'), name: 'F', is_active: true, rollout_percentage: 100, ...body },
  });
  if (res.statusCode !== 201) throw new Error(`create flag: ${res.statusCode} ${res.body}`);
  return res.json();
}

async function createSegment(body: Record<string, unknown>) {
  const res = await t.inject({ method: 'POST', url: '/api/v1/segments', headers: dev.headers, payload: { name: t.unique('seg'), ...body } });
  if (res.statusCode !== 201) throw new Error(`create segment: ${res.statusCode} ${res.body}`);
  return res.json();
}

const nested = (levels: number): Record<string, unknown> => (levels <= 1 ? {} : { a: nested(levels - 1) });

describe('SDK ruleset', () => {
  it('returns every flag with its rules and rollout, the segments named and the bucketing version, with an ETag', async () => {
    const segment = await createSegment({ rules: rules({ attribute: 'plan', operator: 'equals', value: 'pro' }) });
    const list = await createSegment({ kind: 'id_list' });
    const flag = await createFlag({
      rollout_percentage: 30,
      targeting_rules: { logical_operator: 'OR', groups: [{ logical_operator: 'AND', conditions: [
        { attribute: 'segment', operator: 'in_segment', value: segment.id },
        { attribute: 'segment', operator: 'not_in_segment', value: list.id },
      ] }] },
    });
    const res = await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: sdkKey.headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(res.headers['cache-control']).toBe('no-cache');
    const body = res.json();
    expect(body.bucketing).toEqual({ name: BUCKETING.name, version: BUCKETING.version });
    expect(body.flags).toContainEqual({
      id: flag.id, key: flag.key, status: 'active', is_active: true, rollout_percentage: 30, targeting_rules: flag.targeting_rules, default_value: false,
    });
    expect(body.segments).toContainEqual({ id: segment.id, kind: 'rules', status: 'active', rules: segment.rules, valid: true });
    expect(body.segments).toContainEqual({ id: list.id, kind: 'id_list', status: 'active', rules: null, valid: true });

    const same = await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: { ...sdkKey.headers, 'if-none-match': `"x", ${res.headers.etag}` } });
    expect([same.statusCode, same.body, same.headers.etag]).toEqual([304, '', res.headers.etag]);
    await t.inject({ method: 'PUT', url: `${BASE}/${flag.id}`, headers: dev.headers, payload: { rollout_percentage: 31 } });
    const changed = await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: { ...sdkKey.headers, 'if-none-match': res.headers.etag as string } });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(res.headers.etag);
  });

  it('needs a key with the sdk:ruleset scope', async () => {
    expect((await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset' })).statusCode).toBe(401);
    expect((await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: dev.headers })).statusCode).toBe(401);
    const res = await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: key.headers });
    expect([res.statusCode, res.json()]).toEqual([403, { detail: 'This API key lacks the sdk:ruleset scope' }]);
  });

  it('compares If-None-Match weakly, in lists and with *', () => {
    expect(matchesIfNoneMatch('W/"abc"', '"abc"')).toBe(true);
    expect(matchesIfNoneMatch('"x" , "abc"', '"abc"')).toBe(true);
    expect(matchesIfNoneMatch('*', '"abc"')).toBe(true);
    expect(matchesIfNoneMatch('"abcd"', '"abc"')).toBe(false);
    expect(matchesIfNoneMatch(undefined, '"abc"')).toBe(false);
  });
});

describe('id_list segments in the SDK', () => {
  it('answers as the service whenever membership cannot change the answer, and error only when it can', async () => {
    const list = await createSegment({ kind: 'id_list' });
    expect((await t.inject({ method: 'POST', url: `/api/v1/segments/${list.id}/members`, headers: dev.headers, payload: { add: ['member'] } })).statusCode).toBe(200);
    const inList = { attribute: 'segment', operator: 'in_segment', value: list.id };
    const us = { attribute: 'country', operator: 'equals', value: 'US' };
    const group = (...conditions: object[]) => ({ logical_operator: 'AND', conditions });
    const flags = {
      orList: await createFlag({ targeting_rules: { logical_operator: 'OR', groups: [group(us), group(inList)] } }),
      andList: await createFlag({ targeting_rules: rules(us, inList) }),
      notList: await createFlag({ targeting_rules: rules({ attribute: 'segment', operator: 'not_in_segment', value: list.id }) }),
      noRollout: await createFlag({ rollout_percentage: 0, targeting_rules: rules(inList) }),
    };
    const ruleset = (await t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: sdkKey.headers })).json();
    const client = new Uplift({ baseUrl: 'http://unused.test', apiKey: 'unused', bootstrap: ruleset, updates: 'off' });
    const explained: string[] = [];
    const enabled: string[] = [];
    try {
      for (const [name, flag] of Object.entries(flags)) {
        for (const user of ['member', 'stranger']) {
          for (const context of [{ country: 'US' }, { country: 'FR' }]) {
            const server = await t.inject({ method: 'POST', url: `${BASE}/evaluate/${flag.key}`, headers: key.headers, payload: { user_id: user, context } });
            const { flag_key: _key, ...expected } = server.json();
            const local = client.evaluate(flag.key, user, context);
            const label = `${name} ${user} ${context.country}`;
            // Wherever the SDK answers, it answers as the service; where membership decides, it says error (off).
            if (local.reason !== 'error') {
              expect(local, label).toEqual(expected);
              explained.push(label);
            }
            if (client.isEnabled(flag.key, user, context)) {
              expect(expected.enabled, label).toBe(true);
              expect(client.allEnabled(user, context)[flag.key], label).toBe(true);
              enabled.push(label);
            }
          }
        }
      }
    } finally {
      await client.close();
    }
    // evaluate() answers the AND through its failing country condition (the matched rule of the OR's US branch
    // depends on membership, and so does the 0 % rollout's reason: rollout or targeting_miss); isEnabled also answers
    // the OR through its country branch, whoever the user is.
    expect(explained.sort()).toEqual(['andList member FR', 'andList stranger FR']);
    expect(enabled.sort()).toEqual(['orList member US', 'orList stranger US']);
  });
});
