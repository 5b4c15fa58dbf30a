import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import {
  CAPPING_NOT_FOR_KIND,
  DEFINITION_IN_USE,
  METRIC_DEFINITION_NOT_FOUND,
  NAME_TAKEN,
  UNKNOWN_DEFINITION,
} from '../../src/modules/metric-definitions/service.js';

const BASE = '/api/v1/metric-definitions';
const MISSING_ID = '00000000-0000-4000-8000-000000000000';
let t: TestApp;
let admin: TestUser;
let developer: TestUser;
let analyst: TestUser;
let viewer: TestUser;

beforeAll(async () => {
  t = await testApp();
  [admin, developer, analyst, viewer] = await t.users('ADMIN', 'DEVELOPER', 'ANALYST', 'VIEWER');
});
afterAll(() => t.close());

const ratio = (name: string) => ({
  name,
  kind: 'ratio',
  description: 'Revenue per session',
  numerator: { event_name: 'purchase', aggregate: 'sum' },
  denominator: { event_name: 'session_start', aggregate: 'count' },
  capping: { type: 'percentile', p: 0.999 },
  tags: ['revenue', 'core'],
});

async function define(body: Record<string, unknown>, user = analyst): Promise<Record<string, any>> {
  const res = await t.call('POST', BASE, user, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

function experimentBody(key: string, metrics: Record<string, unknown>[]) {
  return {
    name: `Experiment ${key}`,
    key,
    variants: [
      { name: 'control', is_control: true, traffic_allocation: 50 },
      { name: 'treatment', traffic_allocation: 50 },
    ],
    metrics,
  };
}

describe('metric library CRUD', () => {
  it('an analyst defines a ratio metric; every role reads it; the creator is the default owner', async () => {
    const name = t.unique('rps');
    const created = await define(ratio(name));
    expect(created).toEqual({
      id: expect.any(String),
      name,
      description: 'Revenue per session',
      kind: 'ratio',
      event_name: null,
      aggregate: null,
      numerator: { event_name: 'purchase', aggregate: 'sum' },
      denominator: { event_name: 'session_start', aggregate: 'count' },
      quantile: null,
      capping: { type: 'percentile', p: 0.999 },
      higher_is_better: true,
      tags: ['revenue', 'core'],
      owner: analyst.username,
      created_by: analyst.id,
      version: 1,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    for (const user of [viewer, developer, admin]) {
      const res = await t.call('GET', `${BASE}/${created.id}`, user);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(created);
    }
    const list = await t.call('GET', `${BASE}?kind=ratio&tag=core`, viewer);
    expect(list.statusCode).toBe(200);
    expect(list.json().map((d: { id: string }) => d.id)).toContain(created.id);
    const otherKind = await t.call('GET', `${BASE}?kind=mean`, viewer);
    expect(otherKind.json().map((d: { id: string }) => d.id)).not.toContain(created.id);
  });

  it('each kind takes its own fields: proportion, mean (capped), quantile', async () => {
    const proportion = await define({ name: t.unique('conv'), kind: 'proportion', event_name: 'purchase' });
    expect(proportion).toMatchObject({ kind: 'proportion', event_name: 'purchase', aggregate: null, capping: { type: 'none' } });
    const mean = await define({
      name: t.unique('rev'), kind: 'mean', event_name: 'purchase', aggregate: 'sum', capping: { type: 'absolute', value: 500 },
    });
    expect(mean).toMatchObject({ kind: 'mean', aggregate: 'sum', capping: { type: 'absolute', value: 500 } });
    const p90 = await define({
      name: t.unique('p90'), kind: 'quantile', event_name: 'page_load', aggregate: 'sum', quantile: 0.9, higher_is_better: false, owner: 'Web perf',
    });
    expect(p90).toMatchObject({ kind: 'quantile', quantile: 0.9, higher_is_better: false, owner: 'Web perf' });
  });

  it('422 at the loc of every field the kind needs or does not use, never echoing the value', async () => {
    const missing = await t.call('POST', BASE, analyst, { name: t.unique('x'), kind: 'ratio', numerator: { event_name: 'secret-ev', aggregate: 'sum' } });
    expect(missing.statusCode).toBe(422);
    expect(missing.json()).toEqual({ detail: [{ type: 'missing', loc: ['body', 'denominator'], msg: 'Field required' }] });

    const extra = await t.call('POST', BASE, analyst, {
      name: t.unique('x'), kind: 'proportion', event_name: 'a', quantile: 0.5, capping: { type: 'absolute', value: 3 },
    });
    expect(extra.statusCode).toBe(422);
    expect(extra.json()).toEqual({
      detail: [
        { type: 'value_error', loc: ['body', 'quantile'], msg: 'Value error, quantile is not used by proportion metrics' },
        { type: 'value_error', loc: ['body', 'capping'], msg: CAPPING_NOT_FOR_KIND },
      ],
    });

    const capping = await t.call('POST', BASE, analyst, {
      name: t.unique('x'), kind: 'mean', event_name: 'a', aggregate: 'count', capping: { type: 'percentile', value: 12345 },
    });
    expect(capping.json()).toEqual({
      detail: [
        { type: 'value_error', loc: ['body', 'capping', 'value'], msg: 'Value error, value is not used by percentile capping' },
        { type: 'missing', loc: ['body', 'capping', 'p'], msg: 'Field required' },
      ],
    });
    expect(capping.body).not.toContain('12345');

    const p = await t.call('POST', BASE, analyst, { name: t.unique('x'), kind: 'quantile', event_name: 'a', aggregate: 'sum', quantile: 1.5 });
    expect(p.statusCode).toBe(422);
    expect(p.json().detail[0].loc).toEqual(['body', 'quantile']);
    expect(p.body).not.toContain('1.5');

    const kind = await t.call('POST', BASE, analyst, { name: t.unique('x'), kind: 'median', event_name: 'a' });
    expect(kind.statusCode).toBe(422);
    expect(kind.json().detail[0].loc).toEqual(['body', 'kind']);
    expect(kind.body).not.toContain('median');

    const badId = await t.call('GET', `${BASE}/not-a-uuid`, viewer);
    expect(badId.statusCode).toBe(422);
    expect(badId.json().detail[0].loc).toEqual(['path', 'metric_definition_id']);
  });

  it('a taken name is 409, on create and on rename', async () => {
    const name = t.unique('dup');
    const first = await define(ratio(name));
    const again = await t.call('POST', BASE, analyst, ratio(name));
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ detail: NAME_TAKEN });
    const other = await define(ratio(t.unique('dup2')));
    const rename = await t.call('PUT', `${BASE}/${other.id}`, analyst, { name });
    expect(rename.statusCode).toBe(409);
    expect((await t.call('PUT', `${BASE}/${first.id}`, analyst, { name })).json().version).toBe(1);
  });

  it('PUT keeps what is left out, adds one to version per change, and a new kind drops the old fields', async () => {
    const d = await define(ratio(t.unique('edit')));
    const capped = await t.call('PUT', `${BASE}/${d.id}`, developer, { capping: { type: 'absolute', value: 100 }, tags: ['x'] });
    expect(capped.statusCode).toBe(200);
    expect(capped.json()).toMatchObject({ version: 2, capping: { type: 'absolute', value: 100 }, tags: ['x'], numerator: d.numerator });
    const unchanged = await t.call('PUT', `${BASE}/${d.id}`, developer, { tags: ['x'] });
    expect(unchanged.json().version).toBe(2);
    const toQuantile = await t.call('PUT', `${BASE}/${d.id}`, admin, { kind: 'quantile', event_name: 'page_load', aggregate: 'sum', quantile: 0.99 });
    expect(toQuantile.statusCode).toBe(200);
    expect(toQuantile.json()).toMatchObject({
      version: 3, kind: 'quantile', numerator: null, denominator: null, event_name: 'page_load', quantile: 0.99, capping: { type: 'none' },
    });
    const incomplete = await t.call('PUT', `${BASE}/${d.id}`, admin, { kind: 'mean' });
    expect(incomplete.json()).toEqual({
      detail: [
        { type: 'missing', loc: ['body', 'event_name'], msg: 'Field required' },
        { type: 'missing', loc: ['body', 'aggregate'], msg: 'Field required' },
      ],
    });
    expect((await t.call('GET', `${BASE}/${d.id}`, viewer)).json().version).toBe(3);
  });

  it('every write is audited with the version', async () => {
    const d = await define(ratio(t.unique('audit')));
    await t.call('PUT', `${BASE}/${d.id}`, analyst, { description: 'changed' });
    expect((await t.call('DELETE', `${BASE}/${d.id}`, analyst)).statusCode).toBe(204);
    const res = await t.call('GET', `/api/v1/audit-logs/?entity_type=metric_definition&entity_id=${d.id}`, admin);
    expect(res.statusCode).toBe(200);
    const entries = res.json().items;
    const byAction = Object.fromEntries(entries.map((e: { action: string }) => [e.action, e]));
    expect(Object.keys(byAction).sort()).toEqual(['metric_definition_create', 'metric_definition_delete', 'metric_definition_update']);
    expect(byAction.metric_definition_update).toMatchObject({
      actor_id: analyst.id,
      before: { description: 'Revenue per session', version: 1 },
      after: { description: 'changed', version: 2 },
    });
  });

  it('401 without a token, 403 for a viewer writing, 404 for an unknown id', async () => {
    expect((await t.call('GET', BASE)).statusCode).toBe(401);
    const d = await define(ratio(t.unique('auth')));
    expect((await t.call('POST', BASE, viewer, ratio(t.unique('v')))).statusCode).toBe(403);
    expect((await t.call('PUT', `${BASE}/${d.id}`, viewer, { description: 'x' })).statusCode).toBe(403);
    expect((await t.call('DELETE', `${BASE}/${d.id}`, viewer)).statusCode).toBe(403);
    for (const [method, body] of [['GET', undefined], ['PUT', { description: 'x' }], ['DELETE', undefined]] as const) {
      const res = await t.call(method, `${BASE}/${MISSING_ID}`, admin, body);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: METRIC_DEFINITION_NOT_FOUND });
    }
  });
});

describe('experiments naming a definition', () => {
  it('two experiments use one definition; an unknown id is 422 at its metric; inline metrics are unchanged', async () => {
    const d = await define(ratio(t.unique('shared')));
    const inline = { name: 'Conversion', event_name: 'purchase', metric_type: 'conversion', is_primary: true };
    const uses = { name: 'Revenue per session', event_name: 'purchase', metric_type: 'revenue', metric_definition_id: d.id };
    const ids: string[] = [];
    for (const key of [t.unique('exp-a'), t.unique('exp-b')]) {
      const res = await t.call('POST', '/api/v1/experiments', developer, experimentBody(key, [inline, uses]));
      expect(res.statusCode, res.body).toBe(201);
      const metrics = res.json().metrics;
      expect(metrics[0]).toMatchObject({ ...inline, metric_definition_id: null });
      expect(metrics[1]).toMatchObject(uses);
      ids.push(res.json().id);
    }
    expect((await t.call('GET', `/api/v1/experiments/${ids[0]}`, viewer)).json().metrics[1].metric_definition_id).toBe(d.id);

    const unknown = await t.call('POST', '/api/v1/experiments', developer,
      experimentBody(t.unique('exp-c'), [inline, { ...uses, metric_definition_id: MISSING_ID }]));
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json()).toEqual({ detail: [{ type: 'value_error', loc: ['body', 'metrics', 1, 'metric_definition_id'], msg: UNKNOWN_DEFINITION }] });
    expect(unknown.body).not.toContain(MISSING_ID);
    const put = await t.call('PUT', `/api/v1/experiments/${ids[0]}`, developer, { metrics: [{ ...uses, metric_definition_id: MISSING_ID }] });
    expect(put.statusCode).toBe(422);
    expect(put.json().detail[0].loc).toEqual(['body', 'metrics', 0, 'metric_definition_id']);
  });

  it('deleting a definition a running experiment uses is 409 naming it; once completed the delete clears the reference', async () => {
    const d = await define(ratio(t.unique('running')));
    const key = t.unique('exp-run');
    const created = await t.call('POST', '/api/v1/experiments', developer,
      experimentBody(key, [{ name: 'RPS', event_name: 'purchase', metric_definition_id: d.id }]));
    const experiment = created.json();
    const draftUser = await t.call('POST', '/api/v1/experiments', developer,
      experimentBody(t.unique('exp-draft'), [{ name: 'RPS', event_name: 'purchase', metric_definition_id: d.id }]));
    expect((await t.call('POST', `/api/v1/experiments/${experiment.id}/start`, developer)).statusCode).toBe(200);

    const refused = await t.call('DELETE', `${BASE}/${d.id}`, analyst);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({
      detail: {
        code: 'metric_definition_in_use',
        message: DEFINITION_IN_USE,
        experiments: [{ id: experiment.id, key, name: experiment.name, status: 'active' }],
      },
    });
    expect((await t.call('GET', `${BASE}/${d.id}`, viewer)).statusCode).toBe(200);

    expect((await t.call('POST', `/api/v1/experiments/${experiment.id}/complete`, developer)).statusCode).toBe(200);
    expect((await t.call('DELETE', `${BASE}/${d.id}`, analyst)).statusCode).toBe(204);
    expect((await t.call('GET', `${BASE}/${d.id}`, viewer)).statusCode).toBe(404);
    for (const id of [experiment.id, draftUser.json().id]) {
      const metric = (await t.call('GET', `/api/v1/experiments/${id}`, viewer)).json().metrics[0];
      expect(metric).toMatchObject({ name: 'RPS', event_name: 'purchase', metric_definition_id: null });
    }
  });

  it('a PUT naming the definition on a running experiment and a delete sent together: exactly one wins', async () => {
    for (let round = 0; round < 3; round++) {
      const d = await define(ratio(t.unique('race')));
      const created = await t.call('POST', '/api/v1/experiments', developer,
        experimentBody(t.unique('exp-race'), [{ name: 'Conversion', event_name: 'purchase' }]));
      const id = created.json().id;
      expect((await t.call('POST', `/api/v1/experiments/${id}/start`, developer)).statusCode).toBe(200);
      const [put, del] = await Promise.all([
        t.call('PUT', `/api/v1/experiments/${id}`, developer, { metrics: [{ name: 'RPS', event_name: 'purchase', metric_definition_id: d.id }] }),
        t.call('DELETE', `${BASE}/${d.id}`, analyst),
      ]);
      const metric = (await t.call('GET', `/api/v1/experiments/${id}`, viewer)).json().metrics[0];
      if (del.statusCode === 204) {
        expect(put.statusCode).toBe(422);
        expect(metric.name).toBe('Conversion');
      } else {
        expect(del.statusCode).toBe(409);
        expect(put.statusCode).toBe(200);
        expect(metric.metric_definition_id).toBe(d.id);
      }
    }
  });
});
