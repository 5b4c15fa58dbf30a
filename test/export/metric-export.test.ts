import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRIC_DEFINITION_COLUMNS, METRIC_RESULT_COLUMNS } from '../../src/modules/export/metric-rows.js';
import { csvRecords } from '../helpers/csv.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

/**
 * The metric library in exports (issue 32, deliverable 5): the results of metrics that name a definition (as the
 * results' definition block gives them) in the metric results file, the experiment report (JSON and CSV), and the
 * library itself as a file, in CSV and JSON.
 */
type Json = Record<string, any>;
let t: TestApp;
let dev: TestUser;
let viewer: TestUser;
let key: Record<string, string>;
const E = '/api/v1/export';

beforeAll(async () => {
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
  viewer = await t.user();
  key = (await t.apiKey(dev)).headers;
});
afterAll(() => t.close());

const get = (url: string) => t.inject({ method: 'GET', url, headers: viewer.headers });
const post = async (url: string, payload: Json) => {
  const res = await t.inject({ method: 'POST', url, headers: dev.headers, payload });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
};

const records = csvRecords;
const cell = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

describe('metric library in exports', () => {
  let revenue: Json;
  let perVisit: Json;
  let exp: Json;

  beforeAll(async () => {
    revenue = await post('/api/v1/metric-definitions', {
      name: t.unique('Revenue'), kind: 'mean', event_name: 'purchase', aggregate: 'sum', capping: { type: 'absolute', value: 50 }, tags: ['money', '=x'],
    });
    perVisit = await post('/api/v1/metric-definitions', {
      name: t.unique('Revenue per visit'), kind: 'ratio', numerator: { event_name: 'purchase', aggregate: 'sum' }, denominator: { event_name: 'visit', aggregate: 'count' },
    });
    exp = await post('/api/v1/experiments/', {
      name: 'Library', key: t.unique('exp'),
      variants: [{ name: 'control', is_control: true, traffic_allocation: 50 }, { name: 'treatment', traffic_allocation: 50 }],
      metrics: [
        { name: 'Purchase', event_name: 'purchase', is_primary: true },
        { name: 'Revenue', event_name: 'purchase', metric_definition_id: revenue.id },
        { name: 'RPV', event_name: 'purchase', metric_definition_id: perVisit.id },
      ],
    });
    await post(`/api/v1/experiments/${exp.id}/start`, {});
    const events: Json[] = [];
    for (let i = 0; i < 40; i++) {
      const user_id = `u${i}`;
      const assigned = await t.inject({ method: 'POST', url: '/api/v1/tracking/assign', headers: key, payload: { experiment_key: exp.key, user_id } });
      expect(assigned.statusCode, assigned.body).toBe(200);
      for (let v = 0; v <= i % 3; v++) events.push({ event_type: 'visit', user_id, experiment_key: exp.key });
      if (i % 2 === 0) events.push({ event_type: 'purchase', user_id, experiment_key: exp.key, value: i % 4 === 0 ? 500 : 10 + i });
    }
    const res = await t.inject({ method: 'POST', url: '/api/v1/tracking/batch', headers: key, payload: { events } });
    expect(res.json()).toMatchObject({ failed: 0 });
    await t.services.events.drain();
  });

  it('metric results: a row per variant of each definition metric, the numbers of the results definition block, in CSV and JSON', async () => {
    const results = (await get(`/api/v1/results/${exp.id}`)).json();
    const expected = results.metrics.filter((m: Json) => m.definition).flatMap((m: Json) => m.variants.map((v: Json) => {
      const d = m.definition.variants.find((x: Json) => x.variant_id === v.variant_id);
      return {
        experiment_id: exp.id, experiment_name: 'Library', metric_id: m.metric_id, metric_name: m.metric_name, is_primary: false,
        metric_definition_id: m.definition.metric_definition_id, definition_version: 1, kind: m.definition.kind, test: m.test,
        variant_id: v.variant_id, variant_name: v.variant_name, is_control: v.is_control, users: v.sample_size, users_with_events: d.users_with_events,
        value: d.value, difference: d.difference, difference_ci_lower: d.difference_ci?.lower ?? null, difference_ci_upper: d.difference_ci?.upper ?? null,
        relative_difference: d.relative_difference, relative_ci_lower: d.relative_ci?.lower ?? null, relative_ci_upper: d.relative_ci?.upper ?? null,
        p_value: v.p_value, adjusted_p_value: v.adjusted_p_value, is_significant: v.is_significant, unavailable_reason: d.unavailable_reason,
        capping_type: m.definition.capping?.type ?? null, capping_p: m.definition.capping?.p ?? null, cap: m.definition.capping?.cap ?? null,
        users_capped: d.users_capped, metric_users_capped: m.definition.capping?.users_capped ?? null,
      };
    }));
    expect(expected).toHaveLength(4);
    // The capped mean touched the 500 purchases; the treatment's comparison has intervals.
    expect(expected[0]).toMatchObject({ kind: 'mean', capping_type: 'absolute', cap: 50 });
    expect(expected[0].metric_users_capped).toBeGreaterThan(0);
    expect(expected[1].difference_ci_lower).not.toBeNull();
    expect(expected[3]).toMatchObject({ kind: 'ratio', test: 'delta_method', capping_type: null });

    const json = (await get(`${E}/metric-results?format=json`)).json().filter((r: Json) => r.experiment_id === exp.id);
    expect(json).toEqual(expected);
    const csv = await get(`${E}/metric-results`);
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="metric_results_\d{8}_\d{6}\.csv"$/);
    expect(csv.body.split('\r\n')[0]).toBe(METRIC_RESULT_COLUMNS.join(','));
    expect(records(csv.body).filter((r) => r.experiment_id === exp.id)).toEqual(expected.map((r: Json) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, cell(v)]))));

    const report = (await get(`${E}/reports/experiments/${exp.id}`)).json();
    expect(report.metrics).toEqual(expected);
    const reportCsv = await get(`${E}/reports/experiments/${exp.id}?format=csv&rows=metrics`);
    expect(reportCsv.headers['content-disposition']).toMatch(/^attachment; filename="experiment_metrics_\d{8}_\d{6}\.csv"$/);
    expect(records(reportCsv.body)).toEqual(records(csv.body).filter((r) => r.experiment_id === exp.id));
    // The variant rows are unchanged by it.
    expect(records((await get(`${E}/reports/experiments/${exp.id}?format=csv`)).body).map((r) => r.variant_name)).toEqual(['control', 'treatment']);
    expect((await get(`${E}/reports/experiments/${exp.id}?format=csv&rows=events`)).statusCode).toBe(422);
  });

  it('the metric library: a row per definition, in CSV (tags as JSON text, formula-looking text quoted) and JSON', async () => {
    const json = (await get(`${E}/metric-definitions?format=json`)).json();
    const row = json.find((r: Json) => r.metric_definition_id === revenue.id);
    expect(Object.keys(row)).toEqual([...METRIC_DEFINITION_COLUMNS]);
    expect(row).toMatchObject({
      name: revenue.name, kind: 'mean', event_name: 'purchase', aggregate: 'sum', numerator_event_name: null, capping_type: 'absolute',
      capping_value: 50, capping_p: null, higher_is_better: true, tags: ['money', '=x'], version: 1,
    });
    expect(row.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    expect(json.find((r: Json) => r.metric_definition_id === perVisit.id)).toMatchObject({
      kind: 'ratio', event_name: null, numerator_event_name: 'purchase', numerator_aggregate: 'sum', denominator_event_name: 'visit',
      denominator_aggregate: 'count', capping_type: 'none',
    });
    const csv = await get(`${E}/metric-definitions`);
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="metric_definitions_\d{8}_\d{6}\.csv"$/);
    expect(csv.body.split('\r\n')[0]).toBe(METRIC_DEFINITION_COLUMNS.join(','));
    expect(records(csv.body).find((r) => r.metric_definition_id === revenue.id)).toMatchObject({ tags: '["money","=x"]', capping_value: '50', higher_is_better: 'true' });
    const none = (await get(`${E}/metric-definitions?format=json&start_date=2000-01-01&end_date=2000-01-02`)).json();
    expect(none).toEqual([]);
  });
});
