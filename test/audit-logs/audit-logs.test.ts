import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditLog } from '../../src/platform/audit.js';
import { systemClock } from '../../src/platform/clock.js';
import type { UpliftApp } from '../../src/app.js';
import { auditApp, auditedChange as auditedChangeBy } from '../helpers/audit.js';
import type { TestApp, TestUser } from '../helpers/test-app.js';
import { entryWith, openSse } from '../helpers/fakes.js';

let t: TestApp;
let core: UpliftApp;
let admin: TestUser;
let analyst: TestUser;
let developer: TestUser;
let viewer: TestUser;
let baseUrl: string;

beforeAll(async () => {
  ({ t, core, admin, analyst, developer, viewer } = await auditApp());
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(() => t.close());

const auditedChange = (user: TestUser) => auditedChangeBy(t, user);

const get = (url: string, user?: TestUser, app = t.app) => app.inject({ method: 'GET', url, headers: user?.headers });

describe('audit log routes', () => {
  it('lists every entry for ADMIN and ANALYST, newest first, with filters and totals', async () => {
    const first = await auditedChange(developer);
    const second = await auditedChange(viewer);
    for (const reader of [admin, analyst]) {
      const res = await get(`/api/v1/audit-logs/?action=api_key_create&limit=1000`, reader);
      expect(res.statusCode).toBe(200);
      const ids = res.json().items.map((e: { entity_id: string }) => e.entity_id);
      expect(ids).toEqual(expect.arrayContaining([first, second]));
      expect(ids.indexOf(second)).toBeLessThan(ids.indexOf(first));
    }
    const one = await get(`/api/v1/audit-logs/?entity_type=api_key&entity_id=${first}`, admin);
    expect(one.json()).toMatchObject({ total: 1, skip: 0, limit: 100 });
    expect(one.json().items[0]).toMatchObject({
      action: 'api_key_create',
      entity_type: 'api_key',
      entity_id: first,
      actor_id: developer.id,
      actor_username: developer.username,
    });
    const paged = await get(`/api/v1/audit-logs/?actor_id=${developer.id}&limit=1&skip=0`, admin);
    expect(paged.json().items).toHaveLength(1);
    expect(paged.json().total).toBeGreaterThanOrEqual(1);
  });

  it('shows DEVELOPER and VIEWER only their own entries and refuses asking for another account', async () => {
    const mine = await auditedChange(developer);
    const theirs = await auditedChange(admin);
    const res = await get('/api/v1/audit-logs/?limit=1000', developer);
    expect(res.statusCode).toBe(200);
    const items = res.json().items as Array<{ actor_id: string; entity_id: string }>;
    expect(items.every((e) => e.actor_id === developer.id)).toBe(true);
    expect(items.map((e) => e.entity_id)).toContain(mine);
    expect(items.map((e) => e.entity_id)).not.toContain(theirs);
    const other = await get(`/api/v1/audit-logs/?actor_id=${admin.id}`, viewer);
    expect(other.statusCode).toBe(403);
    expect(other.json()).toEqual({ detail: 'Not enough permissions' });
  });

  it('answers 401 without a token and 422 for bad query values', async () => {
    expect((await get('/api/v1/audit-logs/')).statusCode).toBe(401);
    const res = await get('/api/v1/audit-logs/?limit=0&actor_id=nope', admin);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type])).toEqual(
      expect.arrayContaining([
        [['query', 'limit'], 'greater_than_equal'],
        [['query', 'actor_id'], 'uuid_parsing'],
      ]),
    );
  });

  it('gives entity history to ADMIN and ANALYST only', async () => {
    const key = await auditedChange(developer);
    await t.inject({ method: 'DELETE', url: `/api/v1/api-keys/${key}`, headers: developer.headers });
    const res = await get(`/api/v1/audit-logs/entity/api_key/${key}`, analyst);
    expect(res.statusCode).toBe(200);
    expect(res.json().items.map((e: { action: string }) => e.action)).toEqual(['api_key_delete', 'api_key_create']);
    expect((await get(`/api/v1/audit-logs/entity/api_key/${key}`, developer)).statusCode).toBe(403);
    expect((await get(`/api/v1/audit-logs/entity/api_key/${key}`)).statusCode).toBe(401);
    const bad = await get(`/api/v1/audit-logs/entity/Api-Key/${key}`, admin);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0]).toMatchObject({ loc: ['path', 'entity_type'], type: 'string_pattern_mismatch' });
    expect((await get(`/api/v1/audit-logs/entity/api_key/${crypto.randomUUID()}`, admin)).json()).toMatchObject({ items: [], total: 0 });
  });

  it("gives user activity: anyone's to ADMIN and ANALYST, only one's own otherwise", async () => {
    const key = await auditedChange(viewer);
    const own = await get(`/api/v1/audit-logs/user/${viewer.id}`, viewer);
    expect(own.statusCode).toBe(200);
    expect(own.json().items.map((e: { entity_id: string }) => e.entity_id)).toContain(key);
    expect((await get(`/api/v1/audit-logs/user/${viewer.id}`, admin)).json().total).toBe(own.json().total);
    expect((await get(`/api/v1/audit-logs/user/${viewer.id}`, developer)).statusCode).toBe(403);
    expect((await get(`/api/v1/audit-logs/user/not-a-uuid`, admin)).statusCode).toBe(422);
    expect((await get(`/api/v1/audit-logs/user/${viewer.id}`)).statusCode).toBe(401);
  });

  it('reports stats to ADMIN and ANALYST', async () => {
    await auditedChange(developer);
    const res = await get('/api/v1/audit-logs/stats?days=7', analyst);
    expect(res.statusCode).toBe(200);
    const stats = res.json();
    expect(stats.total_entries).toBeGreaterThan(0);
    expect(stats.by_action).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'api_key_create' })]));
    expect(stats.top_actors.length).toBeGreaterThan(0);
    expect(stats.per_day.reduce((s: number, d: { count: number }) => s + d.count, 0)).toBe(stats.total_entries);
    expect((await get('/api/v1/audit-logs/stats', viewer)).statusCode).toBe(403);
    expect((await get('/api/v1/audit-logs/stats?days=0', admin)).statusCode).toBe(422);
    expect((await get('/api/v1/audit-logs/stats')).statusCode).toBe(401);
  });
});

describe('audit log stream', () => {
  const streamUrl = () => `${baseUrl}/api/v1/audit-logs/stream`;

  it('pushes a new entry to a connected socket client after its transaction commits, with heartbeats', async () => {
    const stream = openSse(streamUrl(), admin.headers);
    await stream.connected;
    expect(stream.status).toBe(200);
    expect(stream.contentType).toContain('text/event-stream');
    const key = await auditedChange(developer);
    const event = await stream.next(entryWith('entity_id', key));
    expect(Number(event.id)).toBeGreaterThan(0);
    expect(JSON.parse(event.data!)).toMatchObject({ action: 'api_key_create', actor_id: developer.id, sequence: Number(event.id) });
    await stream.next((e) => e.comments.includes('heartbeat'));
    stream.close();
  });

  it('never streams an entry whose transaction rolled back', async () => {
    const stream = openSse(streamUrl(), admin.headers);
    await stream.connected;
    const rolledBack = crypto.randomUUID();
    const writer = createAuditLog({ clock: systemClock });
    await expect(
      t.database.db.transaction(async (tx) => {
        await writer.record(tx, { id: admin.id, username: admin.username }, { action: 'probe', entityType: 'probe', entityId: rolledBack });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const key = await auditedChange(admin);
    await stream.next(entryWith('entity_id', key));
    expect(stream.entries().some((e) => e.entity_id === rolledBack)).toBe(false);
    expect((await get(`/api/v1/audit-logs/?entity_id=${rolledBack}`, admin)).json().total).toBe(0);
    stream.close();
  });

  it('streams only their own entries to DEVELOPER and VIEWER', async () => {
    const stream = openSse(streamUrl(), developer.headers);
    await stream.connected;
    const othersKey = await auditedChange(admin);
    const ownKey = await auditedChange(developer);
    await stream.next(entryWith('entity_id', ownKey));
    // The admin's entry was sealed first: had it been visible, it would have arrived before the developer's.
    expect(stream.entries().map((e) => e.entity_id)).not.toContain(othersKey);
    expect(stream.entries().every((e) => e.actor_id === developer.id)).toBe(true);
    stream.close();
  });

  it('resumes after Last-Event-ID from the table', async () => {
    const first = openSse(streamUrl(), analyst.headers);
    await first.connected;
    const a = await auditedChange(developer);
    const eventA = await first.next(entryWith('entity_id', a));
    first.close();
    const b = await auditedChange(developer);
    const c = await auditedChange(viewer);
    const resumed = openSse(`${streamUrl()}?action=api_key_create`, { ...analyst.headers, 'last-event-id': eventA.id! });
    await resumed.next(entryWith('entity_id', c));
    const ids = resumed.entries().map((e) => e.entity_id);
    expect(ids).not.toContain(a);
    expect(ids.indexOf(b)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(b)).toBeLessThan(ids.indexOf(c));
    const sequences = resumed.entries().map((e) => e.id);
    expect(sequences).toEqual([...sequences].sort((x, y) => x - y));
    resumed.close();
  });

  it('answers 401 without a token and 422 for a malformed Last-Event-ID', async () => {
    expect((await get('/api/v1/audit-logs/stream')).statusCode).toBe(401);
    const res = await t.inject({ method: 'GET', url: '/api/v1/audit-logs/stream', headers: { ...admin.headers, 'last-event-id': 'abc' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0]).toMatchObject({ loc: ['header', 'last-event-id'], type: 'string_pattern_mismatch' });
  });

  it('keeps the headers hooks set (rate limit) on the stream response', async () => {
    const limited = await t.spawn({ RATE_LIMIT_ENABLED: 'true', AUDIT_STREAM_HEARTBEAT_SECONDS: '1' });
    await limited.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (limited.app.server.address() as AddressInfo).port;
    const stream = openSse(`http://127.0.0.1:${port}/api/v1/audit-logs/stream`, admin.headers);
    await stream.connected;
    expect(stream.status).toBe(200);
    expect(stream.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    expect(stream.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(stream.headers['content-type']).toContain('text/event-stream');
    stream.close();
  });

  it.runIf(process.env.TEST_REDIS_URL || process.env.TEST_DATABASE_URL)('reaches streams of every API process', async () => {
    await core.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (core.app.server.address() as AddressInfo).port;
    const stream = openSse(`http://127.0.0.1:${port}/api/v1/audit-logs/stream`, admin.headers);
    await stream.connected;
    const key = await auditedChange(developer);
    await stream.next(entryWith('entity_id', key));
    stream.close();
  });
});

