import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import { experiment } from '../helpers/fixtures.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

let t: TestApp;
let dev: TestUser;
let key: Record<string, string>;
beforeAll(async () => {
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
  key = (await t.apiKey(dev)).headers;
});
afterAll(() => t.close());

const peek = (experimentKey: string, userId: string, headers = key) =>
  t.inject({ method: 'GET', url: `/api/v1/tracking/assign/peek?experiment_key=${encodeURIComponent(experimentKey)}&user_id=${encodeURIComponent(userId)}`, headers });
const rowsOf = async (experimentId: string) => (await queryRows<{ assignments: number; events: number }>(t.database.db, sql`
  SELECT (SELECT count(*)::int FROM assignments WHERE experiment_id = ${experimentId}) AS assignments,
         (SELECT count(*)::int FROM events WHERE experiment_id = ${experimentId}) AS events`))[0];

describe('GET /tracking/assign/peek (beta)', () => {
  it("reads a user's assignment without enrolling the user or recording a view", async () => {
    const e = await experiment(t, dev);
    const before = await peek(e.key, 'carol');
    expect(before.statusCode).toBe(200);
    expect(before.json()).toEqual({
      experiment_key: e.key, experiment_status: 'active', user_id: 'carol', assigned: false,
      variant_id: null, variant_name: null, is_control: null, configuration: null, assigned_at: null,
    });
    expect(await rowsOf(e.id)).toEqual({ assignments: 0, events: 0 });

    const assigned = (await t.inject({ method: 'POST', url: '/api/v1/tracking/assign', headers: key, payload: { experiment_key: e.key, user_id: 'carol' } })).json();
    const after = await peek(e.key, 'carol');
    expect(after.json()).toMatchObject({
      assigned: true, variant_id: assigned.variant_id, variant_name: assigned.variant_name, is_control: assigned.is_control,
      configuration: assigned.configuration,
    });
    expect(Date.parse(after.json().assigned_at)).not.toBeNaN();
    expect(await rowsOf(e.id)).toEqual({ assignments: 1, events: 1 });

    // A paused experiment assigns nobody, but its assignments can still be read.
    await t.inject({ method: 'POST', url: `/api/v1/experiments/${e.id}/pause`, headers: dev.headers });
    expect((await peek(e.key, 'carol')).json()).toMatchObject({ experiment_status: 'paused', assigned: true, variant_id: assigned.variant_id });
  });

  it('is 404 for an unknown key, 422 without parameters, 401 without an API key, and documented as beta', async () => {
    const unknown = await peek('no-such-experiment', 'u1');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().detail).toBe("No experiment has the experiment_key 'no-such-experiment'.");
    expect((await t.inject({ method: 'GET', url: '/api/v1/tracking/assign/peek?experiment_key=x', headers: key })).statusCode).toBe(422);
    expect((await peek('x', 'u1', {})).statusCode).toBe(401);
    const spec = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(spec.paths['/api/v1/tracking/assign/peek'].get['x-stability']).toBe('beta');
  });
});
