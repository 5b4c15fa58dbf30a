import { expect } from 'vitest';
import { experiment } from '../helpers/fixtures.js';
import type { TestApp, TestUser } from '../helpers/test-app.js';
import { CAP, CONVERSION_HOURS, expected, fisherByEnumeration, meanInterval, seedData, welchByHand, WINDOW_END, WINDOW_START } from './seed.js';

export const W = '/api/v1/warehouse/analysis';

export async function post(t: TestApp, user: TestUser, url: string, payload?: unknown) {
  return t.inject({ method: 'POST', url: `${W}${url}`, headers: user.headers, ...(payload === undefined ? {} : { payload: payload as object }) });
}

export async function put(t: TestApp, user: TestUser, url: string, payload: unknown) {
  return t.inject({ method: 'PUT', url: `${W}${url}`, headers: user.headers, payload: payload as object });
}

export async function get(t: TestApp, user: TestUser, url: string) {
  return t.inject({ method: 'GET', url: `${W}${url}`, headers: user.headers });
}

/** Creates and validates the three sources of the seeded tables (schema.exposures and schema.events). */
export async function seededSources(t: TestApp, user: TestUser, connectionId: string, schema: string) {
  const create = async (body: Record<string, unknown>) => {
    const res = await post(t, user, '/sources', { connection_id: connectionId, ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  const assignment = await create({
    kind: 'assignment', name: 'Exposures DE', table: `${schema}.exposures`,
    columns: { unit_id: 'user_id', variant: 'variant', exposed_at: 'ts' },
    filters: [{ column: 'country', operator: 'eq', value: 'DE' }],
  });
  const purchase = await create({
    kind: 'metric', name: 'Purchased', table: `${schema}.events`, metric_type: 'proportion',
    columns: { unit_id: 'user_id', event_at: 'ts' }, conversion_window_hours: CONVERSION_HOURS,
  });
  const revenue = await create({
    kind: 'metric', name: 'Revenue', table: `${schema}.events`, metric_type: 'mean',
    columns: { unit_id: 'user_id', event_at: 'ts', value: 'amount' }, cap_value: CAP,
  });
  return { assignment, purchase, revenue };
}

/** The whole analysis through HTTP on seeded data, checked against counts, means and p-values computed in the test. */
export async function analyseAndCheck(t: TestApp, user: TestUser, connectionId: string, schema: string) {
  const data = seedData();
  const sources = await seededSources(t, user, connectionId, schema);
  const exp = await experiment(t, user);
  const body = {
    connection_id: connectionId,
    assignment_source_id: sources.assignment,
    metric_source_ids: [sources.purchase, sources.revenue],
    window_start: WINDOW_START.toISOString().replace('Z', ''),
    window_end: WINDOW_END.toISOString(),
  };
  const unvalidated = await post(t, user, `/experiments/${exp.id}/runs`, body);
  expect(unvalidated.statusCode).toBe(409);
  expect(unvalidated.json().detail.code).toBe('source_not_validated');
  for (const id of Object.values(sources)) {
    const res = await post(t, user, `/sources/${id}/validate`);
    expect(res.json(), id).toEqual({ valid: true, errors: [] });
  }

  const started = await post(t, user, `/experiments/${exp.id}/runs`, body);
  expect(started.statusCode, started.body).toBe(202);
  expect(started.json()).toMatchObject({ kind: 'analysis', status: 'queued', experiment_id: exp.id, results: null });
  await t.services.warehouse.drain();
  const res = await get(t, user, `/runs/${started.json().id}`);
  const run = res.json();
  expect(run.status, JSON.stringify(run)).toBe('succeeded');
  expect(run.sql).toHaveLength(3);
  expect(run.window_start).toBe(WINDOW_START.toISOString());

  const control = exp.variants.find((v) => v.is_control)!;
  const treatment = exp.variants.find((v) => !v.is_control)!;
  const proportion = expected(data, { country: 'DE', conversionHours: CONVERSION_HOURS, cap: null, valueMetric: false });
  const mean = expected(data, { country: 'DE', conversionHours: null, cap: CAP, valueMetric: true });
  expect(run.diagnostics.excluded_multiple_variants).toBe(proportion.excluded);
  expect(proportion.excluded).toBeGreaterThan(0);
  expect(run.diagnostics.units_per_label).toEqual({ control: proportion.arms.control.units, treatment: proportion.arms.treatment.units });

  const [purchase, revenue] = run.results;
  expect(purchase.metric_source_id).toBe(sources.purchase);
  const pc = proportion.arms.control;
  const pt = proportion.arms.treatment;
  expect(purchase.variants[0]).toEqual({ label: 'control', variant_id: control.id, units: pc.units, conversions: pc.conversions, mean: pc.conversions / pc.units });
  expect(purchase.variants[1]).toMatchObject({ label: 'treatment', variant_id: treatment.id, units: pt.units, conversions: pt.conversions });
  expect(purchase.variants[1].p_value).toBeCloseTo(fisherByEnumeration(pc.conversions, pc.units, pt.conversions, pt.units), 9);

  const mc = mean.arms.control;
  const mt = mean.arms.treatment;
  expect(revenue.metric_type).toBe('mean');
  expect(revenue.variants[0].mean).toBeCloseTo(mc.mean, 9);
  expect(revenue.variants[1].mean).toBeCloseTo(mt.mean, 9);
  const [lo, hi] = meanInterval(mt.values);
  expect(revenue.variants[1].ci_lower).toBeCloseTo(lo, 9);
  expect(revenue.variants[1].ci_upper).toBeCloseTo(hi, 9);
  expect(revenue.variants[1].p_value).toBeCloseTo(welchByHand(mc.values, mt.values), 9);
  expect(revenue.variants[0].p_value).toBeUndefined();
  expect(run.srm).toMatchObject({ checked: true, observed: { [control.id]: pc.units, [treatment.id]: pt.units } });
  return { run, sources, experiment: exp };
}
