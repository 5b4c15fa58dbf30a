import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_NOT_DELETABLE,
  DEFAULT_NOT_UNSET,
  ENVIRONMENT_KEY_TAKEN,
  keysStillBelong,
  MAX_ENVIRONMENTS,
  TOO_MANY_ENVIRONMENTS,
} from '../../src/modules/environments/service.js';
import { openStream } from '../helpers/sse-stream.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let admin: TestUser;
let dev: TestUser;
let viewer: TestUser;
let superuser: TestUser;
const ENVS = '/api/v1/environments';
const FLAGS = '/api/v1/feature-flags';
const US = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'country', operator: 'equals', value: 'US' }] }] };

beforeAll(async () => {
  t = await testApp();
  [admin, dev, viewer] = await t.users('ADMIN', 'DEVELOPER', 'VIEWER');
  superuser = await t.user({ superuser: true });
});
afterAll(() => t.close());

const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, user?: TestUser, payload?: unknown) =>
  t.inject({ method, url, headers: user?.headers ?? {}, ...(payload === undefined ? {} : { payload: payload as object }) });
const createEnv = async (body: Record<string, unknown>) => {
  const res = await call('POST', ENVS, admin, { name: 'Env', ...body });
  if (res.statusCode !== 201) throw new Error(`create env: ${res.statusCode} ${res.body}`);
  return res.json();
};
const keyIn = async (environment: string | undefined, scopes: string[] = ['sdk:ruleset']) => {
  const res = await call('POST', '/api/v1/api-keys', dev, { name: 'k', scopes, ...(environment ? { environment } : {}) });
  if (res.statusCode !== 201) throw new Error(`api key: ${res.statusCode} ${res.body}`);
  return { id: res.json().id as string, environment: res.json().environment as string, headers: { 'x-api-key': res.json().key as string } };
};
const evaluate = (key: { headers: Record<string, string> }, flagKey: string, userId: string, context?: object) =>
  t.inject({
    method: 'GET',
    url: `${FLAGS}/evaluate/${flagKey}?user_id=${userId}${context ? `&context=${encodeURIComponent(JSON.stringify(context))}` : ''}`,
    headers: key.headers,
  }).then((r) => r.json());

describe('the environments resource', () => {
  it('starts with production as the only default, readable by every signed-in role', async () => {
    const res = await call('GET', ENVS, viewer);
    expect(res.statusCode).toBe(200);
    expect(res.json().filter((e: { is_default: boolean }) => e.is_default)).toEqual([
      { key: 'production', name: 'Production', description: 'The default environment', color: null, sort_order: 0, is_default: true, created_at: expect.any(String) },
    ]);
    expect((await call('GET', `${ENVS}/production`, viewer)).json()).toMatchObject({ key: 'production', is_default: true });
    expect((await call('GET', `${ENVS}/nope`, viewer)).statusCode).toBe(404);
    expect((await call('GET', ENVS)).statusCode).toBe(401);
  });

  it('lets ADMIN and superusers write, nobody else; validates key and fields', async () => {
    expect((await call('POST', ENVS, dev, { key: 'dev-only', name: 'D' })).statusCode).toBe(403);
    expect((await call('POST', ENVS, viewer, { key: 'dev-only', name: 'D' })).statusCode).toBe(403);
    const made = await call('POST', ENVS, superuser, { key: 'su_env-1', name: 'By root', color: '#00ff00', sort_order: 5 });
    expect(made.statusCode).toBe(201);
    expect(made.json()).toEqual({ key: 'su_env-1', name: 'By root', description: null, color: '#00ff00', sort_order: 5, is_default: false, created_at: expect.any(String) });
    for (const key of ['Upper', 'has space', '', 'x'.repeat(65), 'ümlaut']) {
      const bad = await call('POST', ENVS, admin, { key, name: 'B' });
      expect(bad.statusCode).toBe(422);
      expect(bad.json().detail[0].loc).toEqual(['body', 'key']);
    }
    expect((await call('POST', ENVS, admin, { key: 'su_env-1', name: 'Again' })).json()).toEqual({ detail: ENVIRONMENT_KEY_TAKEN });
    expect((await call('PATCH', `${ENVS}/su_env-1`, dev, { name: 'x' })).statusCode).toBe(403);
    const renamed = await call('PATCH', `${ENVS}/su_env-1`, admin, { name: 'Renamed', description: 'd' });
    expect(renamed.json()).toMatchObject({ key: 'su_env-1', name: 'Renamed', description: 'd', color: '#00ff00' });
    const keyChange = await call('PATCH', `${ENVS}/su_env-1`, admin, { key: 'other' });
    expect(keyChange.statusCode).toBe(422);
    expect((await call('PATCH', `${ENVS}/missing`, admin, { name: 'x' })).statusCode).toBe(404);
    expect((await call('DELETE', `${ENVS}/su_env-1`, dev)).statusCode).toBe(403);
    expect((await call('DELETE', `${ENVS}/su_env-1`, admin)).statusCode).toBe(204);
    expect((await call('GET', `${ENVS}/su_env-1`, viewer)).statusCode).toBe(404);
    const audit = await t.database.session((exec) => exec<{ action: string }>(`SELECT action FROM audit_logs WHERE entity_type = 'environment' AND entity_id = 'su_env-1' ORDER BY created_at`));
    expect(audit.map((r) => r.action)).toEqual(['environment_create', 'environment_update', 'environment_delete']);
  });

  it('moves the default in one PATCH, never leaves none, and refuses to delete the default or an environment with keys', async () => {
    await createEnv({ key: 'moving' });
    const moved = await call('PATCH', `${ENVS}/moving`, admin, { is_default: true });
    expect(moved.json()).toMatchObject({ key: 'moving', is_default: true });
    const list = (await call('GET', ENVS, viewer)).json() as Array<{ key: string; is_default: boolean }>;
    expect(list.filter((e) => e.is_default).map((e) => e.key)).toEqual(['moving']);
    expect((await call('PATCH', `${ENVS}/moving`, admin, { is_default: false })).json()).toEqual({ detail: DEFAULT_NOT_UNSET });
    expect((await call('DELETE', `${ENVS}/moving`, admin)).json()).toEqual({ detail: DEFAULT_NOT_DELETABLE });
    expect((await call('PATCH', `${ENVS}/production`, admin, { is_default: true })).json()).toMatchObject({ is_default: true });
    const key = await keyIn('moving');
    expect(key.environment).toBe('moving');
    const refused = await call('DELETE', `${ENVS}/moving`, admin);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ detail: keysStillBelong(1) });
    expect((await call('DELETE', `/api/v1/api-keys/${key.id}`, dev)).statusCode).toBe(204);
    expect((await call('DELETE', `${ENVS}/moving`, admin)).statusCode).toBe(204);
  });

  it(`holds at most ${MAX_ENVIRONMENTS} environments`, async () => {
    const existing = ((await call('GET', ENVS, viewer)).json() as unknown[]).length;
    const made: string[] = [];
    for (let i = existing; i < MAX_ENVIRONMENTS; i++) made.push((await createEnv({ key: `limit-${i}` })).key);
    const over = await call('POST', ENVS, admin, { key: 'one-too-many', name: 'X' });
    expect(over.statusCode).toBe(409);
    expect(over.json()).toEqual({ detail: TOO_MANY_ENVIRONMENTS });
    for (const key of made) expect((await call('DELETE', `${ENVS}/${key}`, admin)).statusCode).toBe(204);
  });
});

describe('one flag, a different answer per environment', () => {
  let flag: { id: string; key: string };
  let prodKey: Awaited<ReturnType<typeof keyIn>>;
  let stagingKey: Awaited<ReturnType<typeof keyIn>>;

  beforeAll(async () => {
    await createEnv({ key: 'staging', name: 'Staging' });
    const res = await call('POST', FLAGS, dev, { key: t.unique('flag'), name: 'F', is_active: true, rollout_percentage: 100 });
    flag = res.json();
    prodKey = await keyIn(undefined);
    stagingKey = await keyIn('staging');
  });

  it('creates a flag on in the environment acted on and off in the others; keys answer in their environment', async () => {
    expect(prodKey.environment).toBe('production');
    expect(await evaluate(prodKey, flag.key, 'u1')).toEqual({ flag_key: flag.key, enabled: true, reason: 'rollout' });
    expect(await evaluate(stagingKey, flag.key, 'u1')).toEqual({ flag_key: flag.key, enabled: false, reason: 'disabled' });
    const view = (await call('GET', `${FLAGS}/${flag.id}`, viewer)).json();
    expect(view).toMatchObject({ is_active: true, status: 'active' });
    expect(view.environments.production).toMatchObject({ is_active: true, status: 'active', rollout_percentage: 100, targeting_rules: null });
    expect(view.environments.staging).toMatchObject({ is_active: false, status: 'inactive', rollout_percentage: 100 });
  });

  it('acts on another environment with ?environment=, leaving the default as it was', async () => {
    const changed = await call('PUT', `${FLAGS}/${flag.id}?environment=staging`, dev, { targeting_rules: US, is_active: true });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toMatchObject({ is_active: true, targeting_rules: US });
    expect(changed.json().environments.production.targeting_rules).toBeNull();
    expect(await evaluate(stagingKey, flag.key, 'u1', { country: 'US' })).toMatchObject({ enabled: true, reason: 'targeting_match' });
    expect(await evaluate(stagingKey, flag.key, 'u1', { country: 'FR' })).toMatchObject({ enabled: false, reason: 'targeting_miss' });
    expect(await evaluate(prodKey, flag.key, 'u1', { country: 'FR' })).toMatchObject({ enabled: true, reason: 'rollout' });
    // The user route, and the bulk answers of OFREP, in each key's environment.
    const user = (key: typeof prodKey) => t.inject({ method: 'GET', url: `${FLAGS}/user/u2?context=${encodeURIComponent('{"country":"FR"}')}`, headers: key.headers }).then((r) => r.json()[flag.key]);
    expect(await user(prodKey)).toBe(true);
    expect(await user(stagingKey)).toBe(false);
    const ofrep = (key: typeof prodKey) =>
      t.inject({ method: 'POST', url: `/ofrep/v1/evaluate/flags/${flag.key}`, headers: key.headers, payload: { context: { targetingKey: 'u2', country: 'FR' } } }).then((r) => r.json());
    expect(await ofrep(prodKey)).toMatchObject({ key: flag.key, value: true });
    expect(await ofrep(stagingKey)).toMatchObject({ key: flag.key, value: false });
    // The SDK ruleset of each environment holds that environment's state, each with its own version.
    const ruleset = (key: typeof prodKey) => t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: key.headers });
    const [prodRuleset, stagingRuleset] = [await ruleset(prodKey), await ruleset(stagingKey)];
    const entry = (res: Awaited<ReturnType<typeof ruleset>>) => res.json().flags.find((f: { key: string }) => f.key === flag.key);
    expect(entry(prodRuleset)).toMatchObject({ is_active: true, targeting_rules: null });
    expect(entry(stagingRuleset)).toMatchObject({ is_active: true, targeting_rules: US });
    expect(prodRuleset.headers.etag).not.toBe(stagingRuleset.headers.etag);
    // Turning it off in staging leaves production on.
    expect((await call('POST', `${FLAGS}/${flag.id}/deactivate?environment=staging`, dev)).json()).toMatchObject({ is_active: false });
    expect(await evaluate(prodKey, flag.key, 'u1')).toMatchObject({ enabled: true });
    expect(await evaluate(stagingKey, flag.key, 'u1', { country: 'US' })).toMatchObject({ enabled: false, reason: 'disabled' });
    // The change names its environment in the audit entry.
    const history = (await call('GET', `${FLAGS}/${flag.id}/history`, admin)).json();
    expect(history[0]).toMatchObject({ before: { status: 'ACTIVE' }, after: { status: 'INACTIVE' }, details: { environment: 'staging' } });
  });

  it('answers 404 at query.environment for an unknown environment', async () => {
    for (const [method, url] of [['GET', `${FLAGS}/${flag.id}?environment=nope`], ['GET', `${FLAGS}?environment=nope`], ['POST', `${FLAGS}/${flag.id}/activate?environment=nope`]] as const) {
      const res = await call(method, url, dev);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: [{ type: 'value_error', loc: ['query', 'environment'], msg: 'Environment not found' }] });
    }
    const badKey = await call('POST', '/api/v1/api-keys', dev, { name: 'k', environment: 'nope' });
    expect(badKey.statusCode).toBe(422);
    expect(badKey.json().detail[0].loc).toEqual(['body', 'environment']);
  });

  it('promotes one flag state from one environment to another, audited', async () => {
    await call('PUT', `${FLAGS}/${flag.id}?environment=staging`, dev, { is_active: true, rollout_percentage: 40 });
    const copied = await call('POST', `${FLAGS}/${flag.id}/environments/production/copy`, dev, { from: 'staging' });
    expect(copied.statusCode).toBe(200);
    expect(copied.json()).toMatchObject({ is_active: true, rollout_percentage: 40, targeting_rules: US });
    expect(copied.json().environments.production).toEqual({ ...copied.json().environments.staging, updated_at: expect.any(String) });
    expect(await evaluate(prodKey, flag.key, 'u1', { country: 'FR' })).toMatchObject({ enabled: false, reason: 'targeting_miss' });
    const history = (await call('GET', `${FLAGS}/${flag.id}/history`, admin)).json();
    expect(history[0]).toMatchObject({ after: { rollout_percentage: 40, targeting_rules: US }, details: { copied_from: 'staging', environment: 'production' } });
    expect((await call('POST', `${FLAGS}/${flag.id}/environments/production/copy`, dev, { from: 'nope' })).statusCode).toBe(422);
    expect((await call('POST', `${FLAGS}/${flag.id}/environments/nope/copy`, dev, { from: 'staging' })).statusCode).toBe(404);
    expect((await call('POST', `${FLAGS}/${flag.id}/environments/staging/copy`, viewer, { from: 'production' })).statusCode).toBe(403);
  });

  it("copies every flag's state on create with copy_from, or starts every flag off", async () => {
    await createEnv({ key: 'qa', copy_from: 'staging' });
    await createEnv({ key: 'sandbox' });
    const view = (await call('GET', `${FLAGS}/${flag.id}`, viewer)).json();
    expect({ ...view.environments.qa, updated_at: null }).toEqual({ ...view.environments.staging, updated_at: null });
    expect(view.environments.sandbox).toMatchObject({ is_active: false, targeting_rules: null });
    const qaKey = await keyIn('qa');
    expect(await evaluate(qaKey, flag.key, 'u1', { country: 'FR' })).toMatchObject({ enabled: false, reason: 'targeting_miss' });
  });
});

describe('the SDK stream of each environment', () => {
  it('announces a change in staging on the staging stream only', async () => {
    const flag = (await call('POST', FLAGS, dev, { key: t.unique('flag'), name: 'S', is_active: true, rollout_percentage: 100 })).json();
    const [prod, staging] = [await keyIn(undefined), await keyIn('staging')];
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const open = async (headers: Record<string, string>) => {
      const stream = await openStream(`${base}/api/v1/sdk/ruleset/stream`, headers);
      const rulesets = () => stream.events.filter((e) => e.event === 'ruleset').map((e) => JSON.parse(e.data).ruleset);
      /** The count-th ruleset event (1: the one sent on connect). */
      const next = async (count: number) => {
        await stream.next(() => rulesets().length >= count);
        return rulesets()[count - 1];
      };
      return { next, rulesets, close: stream.close };
    };
    const prodStream = await open(prod.headers);
    const stagingStream = await open(staging.headers);
    const stateIn = (ruleset: { flags: Array<{ key: string; is_active: boolean; rollout_percentage: number }> }) => ruleset.flags.find((f) => f.key === flag.key);
    expect(stateIn(await prodStream.next(1))).toMatchObject({ is_active: true });
    expect(stateIn(await stagingStream.next(1))).toMatchObject({ is_active: false });
    await call('PUT', `${FLAGS}/${flag.id}?environment=staging`, dev, { is_active: true, rollout_percentage: 30 });
    expect(stateIn(await stagingStream.next(2))).toMatchObject({ is_active: true, rollout_percentage: 30 });
    // Production's stream hears the next production change, and nothing from staging came before it.
    await call('PUT', `${FLAGS}/${flag.id}`, dev, { rollout_percentage: 70 });
    expect(stateIn(await prodStream.next(2))).toMatchObject({ is_active: true, rollout_percentage: 70 });
    expect(prodStream.rulesets().map((r) => stateIn(r)!.rollout_percentage)).toEqual([100, 70]);
    prodStream.close();
    stagingStream.close();
  });
});
