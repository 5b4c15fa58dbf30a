import { experiment, type ExperimentOptions } from '../helpers/fixtures.js';
import type { TestApp, TestUser } from '../helpers/test-app.js';

export type Json = Record<string, any>;

export interface TrackedEvent {
  event_type: string;
  user_id: string;
  experiment_key?: string;
  feature_flag_key?: string;
  value?: number;
}

/** Drives an experiment through the API: batch assignment and batch tracking with an sdk:ruleset key. */
export class Driver {
  constructor(
    readonly t: TestApp,
    readonly owner: TestUser,
    readonly key: Record<string, string>,
  ) {}

  /** An experiment made through the API (started unless `start: false`); metrics may carry any metric field. */
  async experiment(options: Omit<ExperimentOptions, 'metrics'> & { metrics?: Json[] } = {}): Promise<Json> {
    return experiment(this.t, this.owner, options as ExperimentOptions);
  }

  /** Assigns the users (1,000 a request) and returns user -> variant id. */
  async assign(experimentKey: string, users: string[], context?: (user: string) => Record<string, unknown>): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (let i = 0; i < users.length; i += 1000) {
      const res = await this.t.inject({
        method: 'POST', url: '/api/v1/tracking/assign/batch', headers: this.key,
        payload: { experiment_key: experimentKey, users: users.slice(i, i + 1000).map((user_id) => ({ user_id, ...(context ? { context: context(user_id) } : {}) })) },
      });
      if (res.statusCode !== 200) throw new Error(`assign: ${res.statusCode} ${res.body}`);
      for (const a of res.json().assignments) out.set(a.user_id, a.variant_id);
    }
    return out;
  }

  async track(events: TrackedEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += 1000) {
      const res = await this.t.inject({ method: 'POST', url: '/api/v1/tracking/batch', headers: this.key, payload: { events: events.slice(i, i + 1000) } });
      if (res.statusCode !== 200 || res.json().failed !== 0) throw new Error(`track: ${res.statusCode} ${res.body}`);
    }
  }

  async get(url: string, user: TestUser = this.owner): Promise<Json> {
    const res = await this.t.inject({ method: 'GET', url, headers: user.headers });
    if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  }
}

/**
 * Events for metric library definitions (page views, purchases with revenue, load times) with a lift in `treatment`:
 * a few large orders, so that a 90th percentile cap touches users, and users without load times.
 */
export function definitionEvents(users: string[], assigned: Map<string, string>, treatment: string, experimentKey: string): TrackedEvent[] {
  const events: TrackedEvent[] = [];
  const event = (event_type: string, user_id: string, value?: number) =>
    events.push({ event_type, user_id, experiment_key: experimentKey, ...(value === undefined ? {} : { value }) });
  for (const [i, user] of users.entries()) {
    const lift = assigned.get(user) === treatment ? 1 : 0;
    for (let k = 0; k < 1 + ((i * 7) % 4); k++) event('page_view', user);
    if ((i * 13) % 10 < 3 + lift) {
      event('purchase', user);
      event('revenue', user, (i % 17 === 0 ? 500 : 10 + ((i * 31) % 40)) + 5 * lift);
    }
    if (i % 5 !== 4) event('load_time', user, 100 + ((i * 37) % 400) + 30 * lift);
    if (i % 9 === 0) event('load_time', user, 50);
  }
  return events;
}

/** Expected per-variant sufficient statistics from what the test assigned and tracked. */
export interface Arm {
  users: number;
  converters: number;
  events: number;
  eventSquares: number;
  value: number;
  valueSquares: number;
}

export function expectedArms(assigned: Map<string, string>, counted: TrackedEvent[]): Map<string, Arm> {
  const perUser = new Map<string, { events: number; value: number }>();
  for (const e of counted) {
    const u = perUser.get(e.user_id) ?? { events: 0, value: 0 };
    u.events += 1;
    u.value += e.value ?? 0;
    perUser.set(e.user_id, u);
  }
  const arms = new Map<string, Arm>();
  for (const [user, variant] of assigned) {
    const arm = arms.get(variant) ?? { users: 0, converters: 0, events: 0, eventSquares: 0, value: 0, valueSquares: 0 };
    arm.users += 1;
    const u = perUser.get(user);
    if (u) {
      arm.converters += 1;
      arm.events += u.events;
      arm.eventSquares += u.events * u.events;
      arm.value += u.value;
      arm.valueSquares += u.value * u.value;
    }
    arms.set(variant, arm);
  }
  return arms;
}

/** numpy's default (linear) percentile, written out here independently of src/stats. */
export function numpyPercentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  const h = (s.length - 1) * p;
  const j = Math.floor(h);
  return j + 1 >= s.length ? s[s.length - 1] : s[j] + (h - j) * (s[j + 1] - s[j]);
}
