import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEGMENT_NOT_USABLE } from '../../src/modules/segments/service.js';
import { experiment } from '../helpers/fixtures.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

/**
 * Spec, "Segment status" and "Targeting rules": a segment is never archived while a draft, active or paused experiment
 * (or a non-archived flag) names it, and no experiment may come to name an archived segment. The archive (or a PUT
 * retiring the segment) and the write naming the segment each check the other side in their own transaction, so two
 * such requests at once must leave one of them refused: never a running experiment targeting an archived segment.
 * Embedded PGlite has one connection, so its requests rarely interleave there; the PostgreSQL block below pins the
 * interleavings that broke this before the checks moved into the writing transactions.
 */

let t: TestApp;
let dev: TestUser;

beforeAll(async () => {
  t = await testApp();
  dev = await t.user({ role: 'DEVELOPER' });
});
afterAll(() => t.close());

type Json = Record<string, any>;
const PRO = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'plan', operator: 'equals', value: 'pro' }] }] };
const naming = (segmentId: string) => ({
  logical_operator: 'AND',
  groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'segment', operator: 'in_segment', value: segmentId }] }],
});
const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  t.inject({ method, url, headers: dev.headers, ...(payload ? { payload } : {}) });

async function segment(): Promise<Json> {
  const res = await call('POST', '/api/v1/segments', { name: t.unique('seg'), rules: PRO });
  if (res.statusCode !== 201) throw new Error(`create segment: ${res.statusCode} ${res.body}`);
  return res.json();
}
const experimentBody = (segmentId: string) => ({
  key: t.unique('exp'),
  name: 'Race',
  variants: [
    { name: 'control', is_control: true, traffic_allocation: 50 },
    { name: 'treatment', traffic_allocation: 50 },
  ],
  metrics: [{ name: 'Purchase', event_name: 'purchase', is_primary: true }],
  targeting_rules: naming(segmentId),
});

/**
 * The invariant, read back from the API after the race: every live experiment naming the segment is started, and
 * then none runs (nor waits as a draft) while the segment is archived or inactive.
 */
async function startUsersAndCheck(segmentId: string): Promise<void> {
  const users = async (): Promise<Json[]> => (await call('GET', `/api/v1/segments/${segmentId}/experiments`)).json().experiments;
  for (const e of await users()) {
    if (e.status === 'draft') expect((await call('POST', `/api/v1/experiments/${e.id}/start`)).statusCode).toBe(200);
  }
  const status = (await call('GET', `/api/v1/segments/${segmentId}`)).json().status;
  const live = (await users()).map((e) => e.status);
  if (status !== 'active') expect({ status, live }).toEqual({ status, live: [] });
  else expect(live.every((s) => s === 'active')).toBe(true);
}

describe('archiving a segment while an experiment comes to name it', () => {
  it('leaves one of the two refused, with the spec answers, however the requests interleave', async () => {
    for (let round = 0; round < 12; round++) {
      const seg = await segment();
      const draft = await experiment(t, dev, { start: false });
      const retire =
        round % 3 === 2
          ? call('PUT', `/api/v1/segments/${seg.id}`, { status: round % 2 ? 'inactive' : 'archived' })
          : call('DELETE', `/api/v1/segments/${seg.id}`);
      const write = round % 2 ? call('PUT', `/api/v1/experiments/${draft.id}`, { targeting_rules: naming(seg.id) }) : call('POST', '/api/v1/experiments/', experimentBody(seg.id));
      const [retired, written] = await Promise.all([retire, write]);
      // Exactly one wins: the experiment names the segment and the retirement is refused, or the other way round.
      const outcome = [retired.statusCode, written.statusCode].sort();
      expect([[200, 409], [201, 409], [204, 422], [200, 422]]).toContainEqual(outcome);
      if (written.statusCode === 422) {
        expect(written.json()).toEqual({ detail: [{ type: 'value_error', loc: ['body', 'targeting_rules'], msg: SEGMENT_NOT_USABLE }] });
      } else {
        expect(retired.json().detail.code).toBe('segment_in_use');
      }
      await startUsersAndCheck(seg.id);
    }
  });
});

/**
 * Deterministic interleavings on PostgreSQL: a transaction of the test's own holds a row lock while one request
 * runs, so the other request is sent exactly while the first is between its check and its write.
 */
describe.runIf(Boolean(process.env.TEST_DATABASE_URL))('the same race held open on PostgreSQL', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = await t.pgClient();
  });
  afterAll(() => client.end());

  /** Sessions of this database waiting on a lock (the test's own excluded). */
  const waiting = async () =>
    (await client.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()")).rowCount ?? 0;
  /** Resolves once `n` sessions wait on a lock, or `request` has answered (whichever comes first). */
  async function queuedOrDone(n: number, request: Promise<unknown>): Promise<void> {
    let done = false;
    void request.finally(() => (done = true));
    while (!done && (await waiting()) < n);
  }

  it('an archive sent while a PUT naming the segment waits for its experiment is refused once the PUT commits', async () => {
    const seg = await segment();
    const draft = await experiment(t, dev, { start: false });
    await client.query('BEGIN');
    try {
      // The PUT is held on the experiment's row, past the point where it checked the segment.
      await client.query('SELECT id FROM experiments WHERE id = $1 FOR UPDATE', [draft.id]);
      const put = call('PUT', `/api/v1/experiments/${draft.id}`, { targeting_rules: naming(seg.id) });
      await queuedOrDone(1, put);
      const archive = call('DELETE', `/api/v1/segments/${seg.id}`);
      await queuedOrDone(2, archive);
      await client.query('COMMIT');
      const [written, archived] = await Promise.all([put, archive]);
      expect(written.statusCode).toBe(200);
      expect(archived.statusCode).toBe(409);
      expect(archived.json().detail.experiments).toEqual([{ id: draft.id, key: draft.key, name: expect.any(String), status: 'draft' }]);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
    }
    await startUsersAndCheck(seg.id);
  });

  it('an archive sent while a new experiment naming the segment waits for its key is refused once it commits', async () => {
    const seg = await segment();
    const body = experimentBody(seg.id);
    const other = await experiment(t, dev, { start: false });
    await client.query('BEGIN');
    try {
      // An uncommitted experiment holding the same key: the create waits at its insert, past its segment check.
      await client.query('CREATE TEMP TABLE held ON COMMIT DROP AS SELECT * FROM experiments WHERE id = $1', [other.id]);
      await client.query('UPDATE held SET id = gen_random_uuid(), key = $1', [body.key]);
      await client.query('INSERT INTO experiments SELECT * FROM held');
      const create = call('POST', '/api/v1/experiments/', body);
      await queuedOrDone(1, create);
      const archive = call('DELETE', `/api/v1/segments/${seg.id}`);
      await queuedOrDone(2, archive);
      await client.query('ROLLBACK');
      const [created, archived] = await Promise.all([create, archive]);
      expect(created.statusCode).toBe(201);
      expect(archived.statusCode).toBe(409);
      expect(archived.json().detail.experiments).toEqual([{ id: created.json().id, key: body.key, name: body.name, status: 'draft' }]);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
    }
    await startUsersAndCheck(seg.id);
  });
});
