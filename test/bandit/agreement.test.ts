import { afterAll, beforeAll, expect, it } from 'vitest';
import { experiment } from '../helpers/fixtures.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
beforeAll(async () => {
  t = await testApp();
  [dev] = await t.users('DEVELOPER');
});
afterAll(() => t.close());

type Json = Record<string, any>;

// One counting rule (docs/adr/0004): the bandit's pulls and conversions are the results' sample sizes and conversions
// of the primary metric, whichever way an event was tagged and whoever was excluded.
it('the bandit and the results count every arm of one experiment alike', async () => {
  const e = await experiment(t, dev, { type: 'bandit' });
  const [control, treatment] = [e.variants.find((v) => v.is_control)!, e.variants.find((v) => !v.is_control)!];
  const flag = await t.inject({
    method: 'POST', url: '/api/v1/feature-flags/', headers: dev.headers,
    payload: { key: t.unique('flag'), name: 'Checkout flag', is_active: true, rollout_percentage: 100 },
  });
  expect(flag.statusCode).toBe(201);
  const headers = (await t.apiKey(dev)).headers;
  const post = async (url: string, payload: Json) => {
    const res = await t.inject({ method: 'POST', url, headers, payload });
    expect(res.statusCode).toBe(200);
    return res.json();
  };

  const assigned: Array<{ user: string; variant: string }> = [];
  for (let i = 0; i < 24; i++) {
    const user = `agree-${e.key}-${i}`;
    assigned.push({ user, variant: (await post('/api/v1/tracking/assign', { experiment_key: e.key, user_id: user })).variant_id });
  }
  for (const [i, { user }] of assigned.entries()) {
    // A third convert with an event of the experiment, a third with an event that names only a flag (it counts for
    // every experiment its user is in), and the rest with an event that names neither (it counts in no results).
    if (i % 3 === 0) await post('/api/v1/tracking/track', { event_type: 'purchase', user_id: user, experiment_key: e.key });
    if (i % 3 === 1) await post('/api/v1/tracking/track', { event_type: 'purchase', user_id: user, feature_flag_key: flag.json().key });
    if (i % 3 === 2) await post('/api/v1/tracking/track', { event_type: 'purchase', user_id: user });
  }
  // A client reports two users in the other arm than their assignment: they leave the analysis.
  for (const { user, variant } of assigned.slice(0, 2)) {
    await post('/api/v1/tracking/events', {
      event_type: 'purchase', user_id: user, experiment_id: e.id, variant_id: variant === control.id ? treatment.id : control.id,
    });
  }

  const results = await t.inject({ method: 'GET', url: `/api/v1/results/${e.id}?use_cache=false`, headers: dev.headers });
  expect(results.statusCode).toBe(200);
  const bandit = await t.inject({ method: 'GET', url: `/api/v1/bandit/${e.id}`, headers: dev.headers });
  expect(bandit.statusCode).toBe(200);
  const primary = (results.json().metrics as Json[]).find((m) => m.is_primary)!;
  const fromResults: Record<string, [number, number]> = Object.fromEntries((primary.variants as Json[]).map((v) => [v.variant_id, [v.sample_size, v.conversions]]));
  const fromBandit: Record<string, [number, number]> = Object.fromEntries((bandit.json().arms as Json[]).map((a) => [a.variant_id, [a.pulls, a.conversions]]));
  expect(fromBandit).toEqual(fromResults);
  // The data exercised every part of the rule: 22 analysed users, of whom those converting through either tag count.
  const total = Object.values(fromResults).reduce((n, [users]) => n + users, 0);
  expect(total).toBe(22);
  const converted = Object.values(fromResults).reduce((n, [, conversions]) => n + conversions, 0);
  expect(converted).toBe(assigned.slice(2).filter((_, i) => (i + 2) % 3 !== 2).length);
});
