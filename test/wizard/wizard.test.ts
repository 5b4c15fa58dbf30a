import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { ONE_CONTROL } from '../../src/modules/experiments/rules.js';
import { DRAFT_NOT_FOUND, DRAFT_SUBMITTED } from '../../src/modules/wizard/service.js';
import { singleVariantBody } from '../helpers/fixtures.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

const clock = fixedClock(new Date('2031-09-01T10:00:00.000Z'));
let t: TestApp;
let dev: TestUser;
let analyst: TestUser;
let viewer: TestUser;

beforeAll(async () => {
  t = await testApp({ clock });
  [dev, analyst, viewer] = await t.users('DEVELOPER', 'ANALYST', 'VIEWER');
});
afterAll(() => t.close());

type Json = Record<string, any>;
const call: TestApp['call'] = (...args) => t.call(...args);

const experimentBody = () => singleVariantBody(t);

describe('wizard (deprecated)', () => {
  const WIZARD = '/api/v1/wizard';

  it('keeps personal drafts, step by step', async () => {
    const created = await call('POST', `${WIZARD}/drafts`, dev, { data: { name: 'From the wizard' } });
    expect(created.statusCode).toBe(201);
    const draft = created.json();
    expect(draft).toMatchObject({ user_id: dev.id, current_step: 1, status: 'draft', experiment_id: null, data: { name: 'From the wizard' } });
    const step = await call('PUT', `${WIZARD}/drafts/${draft.id}/step`, dev, { step: 2, data: { key: t.unique('wiz'), hypothesis: 'h' } });
    expect(step.json()).toMatchObject({ current_step: 2, data: { name: 'From the wizard', hypothesis: 'h' } });
    expect((await call('GET', `${WIZARD}/drafts/${draft.id}`, dev)).json()).toEqual(step.json());
    expect((await call('GET', `${WIZARD}/drafts`, dev)).json().map((d: Json) => d.id)).toContain(draft.id);

    const otherDev = await t.user({ role: 'DEVELOPER' });
    expect((await call('GET', `${WIZARD}/drafts`, otherDev)).json()).toEqual([]);
    expect((await call('GET', `${WIZARD}/drafts/${draft.id}`, otherDev)).json()).toEqual({ detail: DRAFT_NOT_FOUND });
    expect((await call('PUT', `${WIZARD}/drafts/${draft.id}/step`, otherDev, { step: 3, data: {} })).statusCode).toBe(404);
    expect((await call('POST', `${WIZARD}/drafts`, viewer, {})).statusCode).toBe(403);
    expect((await call('PUT', `${WIZARD}/drafts/${draft.id}/step`, analyst, { step: 3, data: {} })).statusCode).toBe(403);
    expect((await call('GET', `${WIZARD}/drafts`)).statusCode).toBe(401);
    for (const payload of [{ step: 6, data: {} }, { step: 3, data: { mde: 1 } }, { step: 3, data: { unknown: 1 } }, { step: 3, data: { variants: [] } }]) {
      expect((await call('PUT', `${WIZARD}/drafts/${draft.id}/step`, dev, payload)).statusCode, JSON.stringify(payload)).toBe(422);
    }
    expect((await call('GET', `${WIZARD}/drafts/nope`, dev)).statusCode).toBe(422);
    expect((await call('GET', `${WIZARD}/drafts/${draft.id}`, dev)).json()).toEqual(step.json());
  });

  it('validates data against the experiment rules', async () => {
    const empty = await call('POST', `${WIZARD}/validate`, viewer, { name: 'Only a name' });
    expect(empty.statusCode).toBe(200);
    expect(empty.json().valid).toBe(false);
    expect(empty.json().errors).toEqual(expect.arrayContaining([
      expect.objectContaining({ type: 'missing', loc: ['data', 'key'] }),
      expect.objectContaining({ type: 'missing', loc: ['data', 'variants'] }),
    ]));
    const noControl = { ...experimentBody(), variants: [{ name: 'a', traffic_allocation: 100 }] };
    expect((await call('POST', `${WIZARD}/validate`, viewer, noControl)).json()).toEqual({
      valid: false,
      errors: [{ type: 'value_error', loc: ['data', 'variants'], msg: ONE_CONTROL }],
    });
    expect((await call('POST', `${WIZARD}/validate`, viewer, { ...experimentBody(), mde: 0.2 })).json()).toEqual({ valid: true, errors: [] });
    expect((await call('POST', `${WIZARD}/validate`, viewer, { status: 'draft' })).statusCode).toBe(422);
  });

  it('submits a complete draft as an experiment with the mde as the primary expected_effect, once', async () => {
    const draft = (await call('POST', `${WIZARD}/drafts`, dev, { data: { name: 'Wizard experiment' } })).json();
    const incomplete = await call('POST', `${WIZARD}/drafts/${draft.id}/submit`, dev);
    expect(incomplete.statusCode).toBe(422);
    expect(incomplete.json().detail).toContainEqual(expect.objectContaining({ loc: ['data', 'key'], type: 'missing' }));
    const body = experimentBody();
    await call('PUT', `${WIZARD}/drafts/${draft.id}/step`, dev, {
      step: 5,
      data: {
        key: body.key,
        variants: body.variants,
        metrics: [{ name: 'secondary', event_name: 'view' }, { name: 'primary', event_name: 'buy', is_primary: true }],
        mde: 0.15,
      },
    });
    expect((await call('POST', `${WIZARD}/drafts/${draft.id}/submit`, viewer)).statusCode).toBe(403);
    const res = await call('POST', `${WIZARD}/drafts/${draft.id}/submit`, dev);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ name: 'Wizard experiment', key: body.key, status: 'draft', owner_id: dev.id });
    expect(res.json().metrics.map((m: Json) => [m.name, m.expected_effect])).toEqual([['secondary', null], ['primary', 0.15]]);
    expect((await call('GET', `${WIZARD}/drafts/${draft.id}`, dev)).json()).toMatchObject({ status: 'submitted', experiment_id: res.json().id });
    const again = await call('POST', `${WIZARD}/drafts/${draft.id}/submit`, dev);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ detail: DRAFT_SUBMITTED });
    expect((await call('PUT', `${WIZARD}/drafts/${draft.id}/step`, dev, { step: 1, data: {} })).statusCode).toBe(409);
    expect((await call('GET', `/api/v1/experiments/?search=${body.key}`, viewer)).json()).toHaveLength(1);
  });

  it('marks all six operations deprecated in the OpenAPI document', async () => {
    const doc = (await call('GET', '/api/v1/openapi.json')).json();
    const ops = Object.entries(doc.paths as Record<string, Record<string, Json>>)
      .filter(([path]) => path.startsWith('/api/v1/wizard'))
      .flatMap(([, methods]) => Object.values(methods));
    expect(ops).toHaveLength(6);
    for (const op of ops) {
      expect(op.deprecated).toBe(true);
      expect(op.summary).toMatch(/ \(deprecated\)$/);
    }
  });
});
