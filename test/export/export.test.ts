import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvCell, csvLine } from '../../src/platform/csv.js';
import { START_AFTER_END } from '../../src/modules/export/period.js';
import {
  EXPERIMENT_COLUMNS,
  FLAG_COLUMNS,
  VARIANT_COLUMNS,
  createExportService,
  type ExperimentResults,
} from '../../src/modules/export/service.js';
import { EXPERIMENT_NOT_FOUND } from '../../src/modules/experiments/service.js';
import { csvRecords, parseCsv } from '../helpers/csv.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
let viewer: TestUser;
let key: Record<string, string>;
const E = '/api/v1/export';
const STORED = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/;

beforeAll(async () => {
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
  viewer = await t.user();
  key = (await t.apiKey(dev)).headers;
});
afterAll(() => t.close());

const records = csvRecords;

async function experiment(name = 'Checkout') {
  const res = await t.inject({
    method: 'POST', url: '/api/v1/experiments/', headers: dev.headers,
    payload: {
      name, key: t.unique('exp'),
      variants: [{ name: 'control', is_control: true, traffic_allocation: 50 }, { name: 'treatment', traffic_allocation: 50 }],
      metrics: [{ name: 'Purchase', event_name: 'purchase', is_primary: true }],
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; key: string; variants: Array<{ id: string; name: string }> };
}

async function flag(rollout = 30) {
  const res = await t.inject({ method: 'POST', url: '/api/v1/feature-flags/', headers: dev.headers, payload: { key: t.unique('flag'), name: 'New nav', rollout_percentage: rollout } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; key: string };
}

const get = (url: string, headers = viewer.headers) => t.inject({ method: 'GET', url, headers });

describe('files', () => {
  it('experiments CSV: header, CRLF, content type, attachment name, counts, stored times, result columns from /results', async () => {
    const exp = await experiment();
    expect((await t.inject({ method: 'POST', url: `/api/v1/experiments/${exp.id}/start`, headers: dev.headers })).statusCode).toBe(200);
    for (const user of ['u1', 'u2']) {
      expect((await t.inject({ method: 'POST', url: '/api/v1/tracking/assign', headers: key, payload: { experiment_key: exp.key, user_id: user } })).statusCode).toBe(200);
    }
    for (const user of ['u1', 'u1', 'u2']) {
      await t.inject({ method: 'POST', url: '/api/v1/tracking/track', headers: key, payload: { event_type: 'purchase', user_id: user, experiment_key: exp.key } });
    }
    await t.services.events.drain();

    const res = await get(`${E}/experiments`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="experiments_\d{8}_\d{6}\.csv"$/);
    expect(res.body.split('\r\n')[0]).toBe(EXPERIMENT_COLUMNS.join(','));
    expect(res.body.endsWith('\r\n')).toBe(true);
    expect(res.body.replace(/\r\n/g, '')).not.toContain('\n');
    const summary = (await get(`/api/v1/results/${exp.id}`)).json().summary;
    const row = records(res.body).find((r) => r.experiment_id === exp.id);
    expect(row).toMatchObject({
      experiment_name: 'Checkout', status: 'active', experiment_type: 'a_b', end_date: '',
      total_assignments: '2', total_events: '3', winner_variant: '', recommendation: summary.recommendation,
    });
    expect(row!.start_date).toMatch(STORED);
    expect(Number(row!.duration_days)).toBeGreaterThanOrEqual(0);

    const json = await get(`${E}/experiments?format=json`);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    const item = json.json().find((r: { experiment_id: string }) => r.experiment_id === exp.id);
    expect(Object.keys(item)).toEqual([...EXPERIMENT_COLUMNS]);
    expect(item).toMatchObject({ total_assignments: 2, total_events: 3, winner_variant: null, recommendation: summary.recommendation, end_date: null });
  });

  it('variants: one row per variant with the exact columns; p_value and improvement empty for the control', async () => {
    const exp = await experiment();
    const treatment = (await get(`/api/v1/results/${exp.id}`)).json().metrics[0].variants.find((v: { variant_name: string }) => v.variant_name === 'treatment');
    const cell = (value: unknown) => (value === null || value === undefined ? '' : String(value));
    const res = await get(`${E}/variants`);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="variants_\d{8}_\d{6}\.csv"$/);
    expect(res.body.split('\r\n')[0]).toBe(VARIANT_COLUMNS.join(','));
    const rows = records(res.body).filter((r) => r.experiment_id === exp.id);
    expect(rows).toEqual(exp.variants.map((v, i) => ({
      experiment_id: exp.id, experiment_name: 'Checkout', variant_id: v.id, variant_name: v.name, is_control: String(i === 0),
      assignments: '0', conversions: '0', conversion_rate: '0', is_significant: 'false',
      p_value: i === 0 ? '' : cell(treatment.p_value), relative_improvement_pct: i === 0 ? '' : cell(treatment.relative_lift === null ? null : treatment.relative_lift * 100),
    })));
    const json = (await get(`${E}/variants?format=json`)).json().filter((r: { experiment_id: string }) => r.experiment_id === exp.id);
    expect(json[0]).toEqual({ ...rows[0], is_control: true, assignments: 0, conversions: 0, conversion_rate: 0, p_value: null, is_significant: false, relative_improvement_pct: null });
  });

  it('feature flags: the exact columns, metric records counted, enabled columns 0, times as stored', async () => {
    const f = await flag(30);
    for (let i = 0; i < 2; i++) {
      await t.inject({ method: 'POST', url: '/api/v1/tracking/track', headers: key, payload: { event_type: 'flag_seen', user_id: `u${i}`, feature_flag_key: f.key } });
    }
    await t.services.events.drain();
    const res = await get(`${E}/feature-flags`);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="feature_flags_\d{8}_\d{6}\.csv"$/);
    expect(res.body.split('\r\n')[0]).toBe(FLAG_COLUMNS.join(','));
    const row = records(res.body).find((r) => r.flag_id === f.id)!;
    expect(row).toMatchObject({ flag_key: f.key, flag_name: 'New nav', status: 'INACTIVE', rollout_percentage: '30', total_evaluations: '2', enabled_evaluations: '0', enabled_rate: '0' });
    expect(row.created_at).toMatch(STORED);
    expect(row.updated_at).toMatch(STORED);
    const json = (await get(`${E}/feature-flags?format=json`)).json().find((r: { flag_id: string }) => r.flag_id === f.id);
    expect(json).toMatchObject({ rollout_percentage: 30, total_evaluations: 2, enabled_evaluations: 0, enabled_rate: 0 });
  });

  it('exports a typed flag with its typed fields: JSON text in CSV, structures in JSON', async () => {
    const variations = [{ key: 'small', value: { size: 1 } }, { key: 'large', value: { size: 9 } }];
    const split = [{ variation: 'small', weight: 40 }, { variation: 'large', weight: 60 }];
    const created = await t.inject({
      method: 'POST', url: '/api/v1/feature-flags/', headers: dev.headers,
      payload: { key: t.unique('typed'), name: 'Sizes', value_type: 'json', variations, variation_split: split, off_variation: 'small' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id;
    const row = records((await get(`${E}/feature-flags`)).body).find((r) => r.flag_id === id)!;
    expect(row).toMatchObject({
      value_type: 'json', variations: JSON.stringify(variations), default_variation: '', off_variation: 'small', variation_rules: '', variation_split: JSON.stringify(split),
    });
    const json = (await get(`${E}/feature-flags?format=json`)).json().find((r: { flag_id: string }) => r.flag_id === id);
    expect(json).toMatchObject({ value_type: 'json', variations, default_variation: null, off_variation: 'small', variation_rules: null, variation_split: split });
    const plain = await flag(10);
    const plainJson = (await get(`${E}/feature-flags?format=json`)).json().find((r: { flag_id: string }) => r.flag_id === plain.id);
    expect(plainJson).toMatchObject({ value_type: 'boolean', variations: null, default_variation: null, off_variation: null, variation_rules: null, variation_split: null });
  });

  it("flag rows are byte for byte the file they were before export took the typed fields from feature-flags' typedFieldsOf", async () => {
    const created = await t.inject({
      method: 'POST', url: '/api/v1/feature-flags/', headers: dev.headers,
      payload: {
        key: t.unique('bytes'), name: 'Sizes', value_type: 'json', off_variation: 'small',
        variations: [{ key: 'small', value: { size: 1 } }, { key: 'large', value: { size: 9 } }],
        variation_split: [{ variation: 'small', weight: 40 }, { variation: 'large', weight: 60 }],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const typed = created.json() as { id: string; key: string };
    const plain = await flag(10);
    const csv = (await get(`${E}/feature-flags`)).body;
    const json = (await get(`${E}/feature-flags?format=json`)).body;
    const times = new Map(records(csv).map((r) => [r.flag_id, [r.created_at, r.updated_at]]));
    const [tc, tu] = times.get(typed.id)!;
    const [pc, pu] = times.get(plain.id)!;
    const lineOf = (id: string) => csv.split('\r\n').find((l) => l.startsWith(`${id},`));
    expect(lineOf(typed.id)).toBe(
      `${typed.id},${typed.key},Sizes,INACTIVE,0,0,0,0,${tc},${tu},json,` +
      '"[{""key"":""small"",""value"":{""size"":1}},{""key"":""large"",""value"":{""size"":9}}]",,small,,' +
      '"[{""variation"":""small"",""weight"":40},{""variation"":""large"",""weight"":60}]"',
    );
    expect(lineOf(plain.id)).toBe(`${plain.id},${plain.key},New nav,INACTIVE,10,0,0,0,${pc},${pu},boolean,,,,,`);
    expect(json).toContain(
      `{"flag_id":"${typed.id}","flag_key":"${typed.key}","flag_name":"Sizes","status":"INACTIVE","rollout_percentage":0,` +
      `"total_evaluations":0,"enabled_evaluations":0,"enabled_rate":0,"created_at":"${tc}","updated_at":"${tu}","value_type":"json",` +
      '"variations":[{"key":"small","value":{"size":1}},{"key":"large","value":{"size":9}}],"default_variation":null,"off_variation":"small",' +
      '"variation_rules":null,"variation_split":[{"variation":"small","weight":40},{"variation":"large","weight":60}]}',
    );
    expect(json).toContain(
      `{"flag_id":"${plain.id}","flag_key":"${plain.key}","flag_name":"New nav","status":"INACTIVE","rollout_percentage":10,` +
      `"total_evaluations":0,"enabled_evaluations":0,"enabled_rate":0,"created_at":"${pc}","updated_at":"${pu}","value_type":"boolean",` +
      '"variations":null,"default_variation":null,"off_variation":null,"variation_rules":null,"variation_split":null}',
    );
  });

  it('quotes formula-looking text cells; numbers stay as they are', async () => {
    const names = ['=HYPERLINK("http://x")', '+1', '-2', '@SUM(A1)', '\tTab', '\rCR', 'a,b "c"'];
    const ids = new Map<string, string>();
    for (const name of names) ids.set((await experiment(name)).id, name);
    const res = await get(`${E}/experiments`);
    for (const row of records(res.body).filter((r) => ids.has(r.experiment_id))) {
      const name = ids.get(row.experiment_id)!;
      expect(row.experiment_name).toBe(/^[=+\-@\t\r]/.test(name) ? `'${name}` : name);
    }
    expect(res.body).toContain('"\'=HYPERLINK(""http://x"")"');
    expect(csvLine([-3, 1.5, 'x', null, true, '-x'])).toBe("-3,1.5,x,,true,'-x\r\n");
    expect(csvCell('line\nbreak')).toBe('"line\nbreak"');
    expect(csvCell('\rx')).toBe('"\'\rx"');
  });

  it('streams more rows than one page, in created_at order, filtered inclusively on both ends', async () => {
    // Rows created at chosen times: the API stamps created_at with the current time, so the window is set directly.
    const tag = t.unique('bulk');
    await t.database.exec(`
      INSERT INTO experiments (id, key, name, created_at, updated_at)
      SELECT gen_random_uuid(), '${tag}-' || n, '${tag}', timestamptz '2035-01-01 00:00:00+00' + n * interval '1 second', now()
      FROM generate_series(0, 1199) AS n`);
    const all = records((await get(`${E}/experiments?start_date=2035-01-01T00:00:00Z&end_date=2035-01-01T00:19:59Z`)).body);
    expect(all).toHaveLength(1200);
    expect(all.every((r) => r.experiment_name === tag)).toBe(true);
    const json = (await get(`${E}/experiments?format=json&start_date=2035-01-01&end_date=2035-01-01`)).json();
    expect(json.map((r: { experiment_id: string }) => r.experiment_id)).toEqual(all.map((r) => r.experiment_id));
    const bounded = records((await get(`${E}/experiments?start_date=2035-01-01T00:00:10&end_date=2035-01-01T00:00:20%2B00:00`)).body);
    expect(bounded).toHaveLength(11);
    const variants = records((await get(`${E}/variants?start_date=2035-01-01T00:00:00Z&end_date=2035-01-01`)).body);
    expect(variants).toEqual([]);
  });

  it('422 for a reserved scope, an unknown format, bad dates, start after end; the value is never echoed', async () => {
    for (const [query, loc] of [
      ['scope=events', ['query', 'scope']],
      ['scope=assignments', ['query', 'scope']],
      ['format=xml', ['query', 'format']],
      ['start_date=yesterday', ['query', 'start_date']],
      ['end_date=2024-02-30', ['query', 'end_date']],
      ['start_date=2024-01-01T25:00:00Z', ['query', 'start_date']],
    ] as const) {
      const res = await get(`${E}/experiments?${query}`);
      expect(res.statusCode, query).toBe(422);
      expect(res.json().detail[0].loc).toEqual(loc);
      expect(res.body).not.toContain(query.split('=')[1]);
    }
    const order = await get(`${E}/feature-flags?start_date=2024-02-02&end_date=2024-02-01`);
    expect(order.json().detail).toEqual([{ type: 'value_error', loc: ['query', 'start_date'], msg: START_AFTER_END }]);
    expect((await get(`${E}/feature-flags?scope=summary`)).statusCode).toBe(200);
    expect((await get(`${E}/reports/overview?end_date=never`)).statusCode).toBe(422);
    expect((await get(`${E}/reports/experiments/00000000-0000-4000-8000-000000000000?format=xml`)).statusCode).toBe(422);
  });

  it('401 without a token; every role may export; a trailing slash answers 307 to the route', async () => {
    for (const path of ['experiments', 'variants', 'feature-flags', 'reports/overview']) {
      expect((await get(`${E}/${path}`, {})).statusCode).toBe(401);
    }
    for (const role of ['ADMIN', 'ANALYST'] as const) {
      expect((await get(`${E}/experiments`, (await t.user({ role })).headers)).statusCode).toBe(200);
    }
    const slash = await get(`${E}/experiments/?format=json`);
    expect(slash.statusCode).toBe(307);
    expect(slash.headers.location).toBe(`${E}/experiments?format=json`);
    expect((await get(`${E}/reports/overview/`)).headers.location).toBe(`${E}/reports/overview`);
  });
});

describe('reports', () => {
  it('overview counts only what was created in the period; periods carry a UTC offset; null without filter', async () => {
    const exps = [await experiment(), await experiment(), await experiment()];
    const f = await flag();
    await t.inject({ method: 'POST', url: `/api/v1/experiments/${exps[0].id}/start`, headers: dev.headers });
    // Place the rows in a window nothing else uses (the API stamps the current time).
    await t.database.exec(`
      UPDATE experiments SET created_at = '2033-06-01T00:00:00Z' WHERE id = '${exps[0].id}';
      UPDATE experiments SET created_at = '2033-06-30T23:59:59.999999Z', start_date = '2033-06-01T00:00:00Z', end_date = '2033-06-03T12:00:00Z', status = 'completed' WHERE id = '${exps[1].id}';
      UPDATE experiments SET created_at = '2033-07-01T00:00:00Z' WHERE id = '${exps[2].id}';
      UPDATE feature_flags SET created_at = '2033-06-15T00:00:00Z' WHERE id = '${f.id}';
      UPDATE flag_environment_states SET status = 'ACTIVE' WHERE flag_id = '${f.id}';`);
    const res = await get(`${E}/reports/overview?start_date=2033-06-01T00:00:00Z&end_date=2033-06-30`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      generated_at: expect.stringMatching(/Z$/),
      period_start: '2033-06-01T00:00:00.000Z',
      period_end: '2033-06-30T23:59:59.999Z',
      total_experiments: 2,
      active_experiments: 1,
      completed_experiments: 1,
      total_feature_flags: 1,
      active_feature_flags: 1,
      total_assignments: 0,
      total_events: 0,
      experiments_with_winners: 0,
      average_experiment_duration_days: 2.5,
    });
    const open = (await get(`${E}/reports/overview`)).json();
    expect(open).toMatchObject({ period_start: null, period_end: null });
    expect(open.total_experiments).toBeGreaterThanOrEqual(3);
  });

  it('experiment report: JSON row and variant rows; CSV of the variant rows; 404 unknown; 422 non-UUID', async () => {
    const exp = await experiment('Report me');
    const res = await get(`${E}/reports/experiments/${exp.id}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.experiment_id).toBe(exp.id);
    expect(body.experiments).toMatchObject({ experiment_id: exp.id, experiment_name: 'Report me', status: 'draft', start_date: null, duration_days: null });
    expect(Object.keys(body.experiments)).toEqual([...EXPERIMENT_COLUMNS]);
    expect(body.variants.map((v: { variant_id: string }) => v.variant_id)).toEqual(exp.variants.map((v) => v.id));

    const csv = await get(`${E}/reports/experiments/${exp.id}?format=csv`);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="experiment_report_\d{8}_\d{6}\.csv"$/);
    expect(parseCsv(csv.body)[0]).toEqual([...VARIANT_COLUMNS]);
    expect(records(csv.body).map((r) => r.variant_name)).toEqual(['control', 'treatment']);

    const unknown = await get(`${E}/reports/experiments/00000000-0000-4000-8000-000000000000`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ detail: EXPERIMENT_NOT_FOUND });
    expect((await get(`${E}/reports/experiments/42`)).json().detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'experiment_id'] });
  });

  it('result columns come from the results source: p_value and improvement empty for the control', async () => {
    const exp = await experiment('With results');
    const [control, treatment] = exp.variants;
    const results: ExperimentResults = {
      winnerVariant: 'treatment',
      recommendation: 'SHIP_VARIANT',
      byVariantId: {
        [control.id]: { sampleSize: 100, conversions: 10, mean: 0.1, pValue: null, isSignificant: false, relativeImprovementPct: null },
        [treatment.id]: { sampleSize: 100, conversions: 20, mean: 0.2, pValue: 0.03, isSignificant: true, relativeImprovementPct: 100 },
      },
      definitionMetrics: [],
    };
    const { experimentsReadModel: experiments, flags, trackingData: tracking, metricDefinitions: definitions } = t.services;
    const exporter = createExportService({
      clock: t.main.clock, results: { exportResults: async (id) => (id === exp.id ? results : null) }, experiments, flags, definitions, tracking,
    });
    let text = '';
    for await (const chunk of (await exporter.experimentReport(exp.id, 'csv')).body) text += chunk;
    expect(records(text)).toEqual([
      { experiment_id: exp.id, experiment_name: 'With results', variant_id: control.id, variant_name: 'control', is_control: 'true', assignments: '100', conversions: '10', conversion_rate: '0.1', p_value: '', is_significant: 'false', relative_improvement_pct: '' },
      { experiment_id: exp.id, experiment_name: 'With results', variant_id: treatment.id, variant_name: 'treatment', is_control: 'false', assignments: '100', conversions: '20', conversion_rate: '0.2', p_value: '0.03', is_significant: 'true', relative_improvement_pct: '100' },
    ]);
    let json = '';
    for await (const chunk of (await exporter.experimentReport(exp.id, 'json')).body) json += chunk;
    expect(JSON.parse(json).experiments).toMatchObject({ winner_variant: 'treatment', recommendation: 'SHIP_VARIANT' });
  });
});

describe('agreement with results', () => {
  it('variant result columns equal GET /results for the primary metric at the stored settings', async () => {
    const e = await experiment('Agreement');
    await t.inject({ method: 'POST', url: `/api/v1/experiments/${e.id}/start`, headers: dev.headers });
    for (let i = 0; i < 60; i++) {
      const user = `agree-${i}`;
      const a = (await t.inject({ method: 'POST', url: '/api/v1/tracking/assign', headers: key, payload: { experiment_key: e.key, user_id: user } })).json();
      const converts = a.is_control ? i % 5 === 0 : i % 2 === 0;
      if (converts) await t.inject({ method: 'POST', url: '/api/v1/tracking/track', headers: key, payload: { event_type: 'purchase', user_id: user, experiment_key: e.key } });
    }
    const results = (await get(`/api/v1/results/${e.id}`)).json();
    const primary = results.metrics.find((m: { is_primary: boolean }) => m.is_primary);
    const rows = (await get(`${E}/variants?format=json`)).json().filter((r: { experiment_id: string }) => r.experiment_id === e.id);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      const v = primary.variants.find((x: { variant_name: string }) => x.variant_name === row.variant_name);
      expect(row.assignments).toBe(v.sample_size);
      expect(row.conversions).toBe(v.conversions);
      expect(row.conversion_rate).toBeCloseTo(v.mean, 12);
      expect(row.is_significant).toBe(v.is_significant);
      if (row.is_control) expect(row.p_value).toBeNull();
      else expect(row.p_value).toBeCloseTo(v.p_value, 12);
    }
    const expRow = (await get(`${E}/experiments?format=json`)).json().find((r: { experiment_id: string }) => r.experiment_id === e.id);
    expect(expRow.recommendation).toBe(results.summary.recommendation);
    expect(expRow.total_assignments).toBe(60);
  });
});

describe('limits and profiles', () => {
  it('10 export requests a minute per address, one count for every export route; then 429 with Retry-After 60', async () => {
    const limited = await t.spawn({ RATE_LIMIT_ENABLED: 'true' });
    const paths = ['experiments', 'variants', 'feature-flags', 'reports/overview', 'reports/experiments/00000000-0000-4000-8000-000000000000'];
    for (let i = 0; i < 10; i++) {
      const res = await limited.app.inject({ method: 'GET', url: `${E}/${paths[i % paths.length]}`, headers: viewer.headers });
      expect(res.statusCode).not.toBe(429);
    }
    for (const path of paths) {
      const res = await limited.app.inject({ method: 'GET', url: `${E}/${path}`, headers: viewer.headers });
      expect(res.statusCode).toBe(429);
      expect(res.headers['retry-after']).toBe('60');
    }
    expect((await limited.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: viewer.headers })).statusCode).toBe(200);
    // 15 exports, three of every experiment with its results, in a database the file has filled: beyond 30 s when
    // the other worker runs a heavy file.
  }, 120_000);

  it('the OpenAPI document describes the export routes with their CSV and JSON bodies', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const op = doc.paths['/api/v1/export/experiments'].get;
    expect(op.operationId).toBe('exportExperiments');
    expect(Object.keys(op.responses['200'].content).sort()).toEqual(['application/json', 'text/csv']);
    expect(doc.paths['/api/v1/export/reports/experiments/{experiment_id}'].get.operationId).toBe('exportExperimentReport');
  });

  it('a core deployment does not serve export routes (404)', async () => {
    const core = await t.spawn({ DEPLOYMENT_PROFILE: 'core' });
    expect((await core.app.inject({ method: 'GET', url: `${E}/experiments`, headers: viewer.headers })).statusCode).toBe(404);
  });
});
