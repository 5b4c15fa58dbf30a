import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { experiment } from '../helpers/fixtures.js';

/** The value of one sample line (`name{labels} value`), 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = match[2] ? match[2].split(',') : [];
    if (wanted.every((w) => have.includes(w))) return Number(match[3]);
  }
  return 0;
}

describe('GET /metrics', () => {
  let t: TestApp;
  let admin: TestUser;
  const clock = fixedClock(new Date('2026-11-24T10:00:00Z'));
  beforeAll(async () => {
    t = await testApp({ clock, env: { METRICS_TOKEN: 'scrape-token-1' } });
    admin = await t.user({ role: 'ADMIN' });
  });
  afterAll(() => t.close());

  const scrape = async () => {
    const res = await t.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-token-1' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    return res.body;
  };

  it('needs the METRICS_TOKEN as a bearer token when one is set', async () => {
    expect((await t.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    const wrong = await t.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-token-2' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ detail: 'Not authenticated' });
  });

  it('is not part of the API document', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths)).not.toContain('/metrics');
  });

  it('counters move with traffic: requests, flags, assignments, events, batches, ruleset loads, scheduler jobs', async () => {
    const before = await scrape();
    const key = t.unique('metrics_flag');
    await t.inject({ method: 'POST', url: '/api/v1/feature-flags/', headers: admin.headers, payload: { key, name: 'm', is_active: true, rollout_percentage: 100 } });
    const sdk = await t.apiKey(admin);
    const flagsRes = await t.inject({ method: 'GET', url: '/api/v1/feature-flags/user/u1', headers: sdk.headers });
    expect(flagsRes.statusCode).toBe(200);
    const evaluated = await t.inject({ method: 'GET', url: `/api/v1/feature-flags/evaluate/${key}?user_id=u1`, headers: sdk.headers });
    expect(evaluated.statusCode).toBe(200);
    const exp = await experiment(t, admin);
    for (const user of ['a', 'b', 'c']) {
      const res = await t.inject({ method: 'POST', url: '/api/v1/tracking/assign', headers: sdk.headers, payload: { experiment_key: exp.key, user_id: user } });
      expect(res.statusCode).toBe(200);
    }
    const batch = await t.inject({
      method: 'POST', url: '/api/v1/tracking/batch', headers: sdk.headers,
      payload: { events: [{ event_type: 'purchase', user_id: 'a', experiment_key: exp.key }, { event_type: 'purchase', user_id: 'b', experiment_key: 'no-such-experiment' }] },
    });
    expect(batch.json()).toMatchObject({ stored: 1, failed: 1 });
    // Refused whole: a schema failure (3 events of a batch; 1 on track) and an unknown key.
    const invalidBatch = await t.inject({
      method: 'POST', url: '/api/v1/tracking/batch', headers: sdk.headers,
      payload: { events: [{ event_type: 'ok', user_id: 'a' }, { event_type: '', user_id: 'a' }, { event_type: 'ok', user_id: 'b' }] },
    });
    expect(invalidBatch.statusCode).toBe(422);
    const invalidTrack = await t.inject({ method: 'POST', url: '/api/v1/tracking/track', headers: sdk.headers, payload: { event_type: '', user_id: 'a' } });
    expect(invalidTrack.statusCode).toBe(422);
    const unknownKey = await t.inject({ method: 'POST', url: '/api/v1/tracking/track', headers: sdk.headers, payload: { event_type: 'e', user_id: 'a', experiment_key: 'no-such' } });
    expect(unknownKey.statusCode).toBe(404);
    await t.services.scheduler.runDue(clock.now());

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(moved('uplift_http_requests_total', { method: 'GET', route: '/api/v1/feature-flags/user/:user_id', status: '200' })).toBe(1);
    expect(moved('uplift_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/tracking/assign', status: '200' })).toBe(3);
    expect(moved('uplift_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/tracking/track', status: '422' })).toBe(1);
    expect(moved('uplift_flag_evaluations_total')).toBeGreaterThanOrEqual(2);
    expect(moved('uplift_ruleset_reloads_total')).toBeGreaterThanOrEqual(1);
    expect(moved('uplift_assignments_total', { outcome: 'assigned' })).toBe(3);
    expect(moved('uplift_events_total', { result: 'ingested' })).toBe(1);
    expect(moved('uplift_events_total', { result: 'rejected' })).toBe(1 + 3 + 1 + 1);
    expect(moved('uplift_group_commit_batch_rows_count', { writer: 'events' })).toBeGreaterThanOrEqual(1);
    expect(moved('uplift_group_commit_batch_rows_count', { writer: 'assignments' })).toBeGreaterThanOrEqual(1);
    expect(moved('uplift_scheduler_job_runs_total', { job: 'results-rollup', result: 'ok' })).toBe(1);
    expect(after).toMatch(/^uplift_group_commit_queue_rows\{writer="events"\} 0$/m);
    expect(after).toContain('uplift_process_resident_memory_bytes');
    if (t.database.kind === 'postgres') expect(after).toMatch(/^uplift_db_pool_connections\{state="idle"\} \d+$/m);
  });

  it('counts open event streams until they close', async () => {
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const gauge = (text: string) => sample(text, 'uplift_sse_connections', { route: '/api/v1/audit-logs/stream' });
    const served = new Promise<ServerResponse>((resolve) => t.app.server.once('request', (_req, res) => resolve(res)));
    const controller = new AbortController();
    const res = await fetch(`${address}/api/v1/audit-logs/stream`, { headers: admin.headers, signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    expect(gauge(await scrape())).toBe(1);
    const response = await served;
    const closed = once(response, 'close');
    controller.abort();
    await closed;
    expect(gauge(await scrape())).toBe(0);
  });

  it('an unknown path is counted under one label, not its raw text', async () => {
    const before = await scrape();
    await t.inject({ method: 'GET', url: '/no/such/path-1' });
    await t.inject({ method: 'GET', url: '/no/such/path-2' });
    const after = await scrape();
    expect(after).not.toContain('path-1');
    const unmatched = (text: string) => sample(text, 'uplift_http_requests_total', { route: '<unmatched>', status: '404' });
    expect(unmatched(after) - unmatched(before)).toBe(2);
  });
});
