import type { TestApp, TestUser } from './test-app.js';

export interface ExperimentOptions {
  type?: 'a_b' | 'mv' | 'bandit';
  variants?: Array<{ name: string; is_control?: boolean; traffic_allocation: number; configuration?: Record<string, unknown> }>;
  metrics?: Array<{ name: string; event_name: string; is_primary?: boolean }>;
  targeting_rules?: Record<string, unknown>;
  start?: boolean;
  extra?: Record<string, unknown>;
}

/** An experiment made through the API (and started unless `start: false`), as a DEVELOPER would. */
export async function experiment(t: TestApp, owner: TestUser, options: ExperimentOptions = {}) {
  const key = t.unique('exp');
  const body = {
    name: `Experiment ${key}`,
    key,
    experiment_type: options.type ?? 'a_b',
    variants: options.variants ?? [
      { name: 'control', is_control: true, traffic_allocation: 50, configuration: { color: 'blue' } },
      { name: 'treatment', is_control: false, traffic_allocation: 50, configuration: { color: 'green' } },
    ],
    metrics: options.metrics ?? [{ name: 'Purchase', event_name: 'purchase', is_primary: true }],
    ...(options.targeting_rules ? { targeting_rules: options.targeting_rules } : {}),
    ...options.extra,
  };
  const created = await t.inject({ method: 'POST', url: '/api/v1/experiments/', headers: owner.headers, payload: body });
  if (created.statusCode !== 201) throw new Error(`create experiment: ${created.statusCode} ${created.body}`);
  const view = created.json();
  if (options.start !== false) {
    const started = await t.inject({ method: 'POST', url: `/api/v1/experiments/${view.id}/start`, headers: owner.headers });
    if (started.statusCode !== 200) throw new Error(`start experiment: ${started.statusCode} ${started.body}`);
    return started.json() as ExperimentViewLite;
  }
  return view as ExperimentViewLite;
}

export interface ExperimentViewLite {
  id: string;
  key: string;
  status: string;
  variants: Array<{ id: string; name: string; is_control: boolean; traffic_allocation: number }>;
  metrics: Array<{ id: string; event_name: string; is_primary: boolean }>;
}

/** The body of an experiment with one control variant taking all traffic and one primary metric (not created). */
export const singleVariantBody = (t: TestApp) => ({
  name: 'Grouped',
  key: t.unique('grp'),
  variants: [{ name: 'control', is_control: true, traffic_allocation: 100 }],
  metrics: [{ name: 'm', event_name: 'e', is_primary: true }],
});
