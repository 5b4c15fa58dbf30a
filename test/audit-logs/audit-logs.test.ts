import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/modules/audit-logs/chain.js';
import { createAuditLog } from '../../src/platform/audit.js';
import { systemClock } from '../../src/platform/clock.js';
import type { UpliftApp } from '../../src/app.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';
import { entryWith, openSse } from '../helpers/fakes.js';

let t: TestApp;
let core: UpliftApp;
let admin: TestUser;
let analyst: TestUser;
let developer: TestUser;
let viewer: TestUser;
let baseUrl: string;

beforeAll(async () => {
  t = await testApp({ env: { AUDIT_STREAM_HEARTBEAT_SECONDS: '1', COMPLIANCE_HMAC_KEY: 'test-compliance-key' } });
  core = await t.spawn({ DEPLOYMENT_PROFILE: 'core', COMPLIANCE_HMAC_KEY: 'test-compliance-key' });
  [admin, analyst, developer, viewer] = await Promise.all([
    t.user({ role: 'ADMIN' }),
    t.user({ role: 'ANALYST' }),
    t.user({ role: 'DEVELOPER' }),
    t.user({ role: 'VIEWER' }),
  ]);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(() => t.close());

/** Creating an API key writes one `api_key_create` audit entry by its owner, about the key. */
async function auditedChange(user: TestUser): Promise<string> {
  return (await t.apiKey(user)).id;
}

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

describe('compliance', () => {
  interface Event {
    id: string;
    sequence: number;
    resource_id: string;
    hmac_signature: string;
    previous_signature: string | null;
    signature_valid: boolean;
  }
  const events = async (query: string, user = admin, app = t.app) => {
    const res = await get(`/api/v1/compliance/audit-events?${query}`, user, app);
    expect(res.statusCode).toBe(200);
    return res.json() as { items: Event[]; total: number; page: number; limit: number };
  };

  it('lists signed audit events chained to their predecessors, in every profile', async () => {
    const key = await auditedChange(developer);
    const { items } = await events(`resource_type=api_key&action=api_key_create&actor_id=${developer.id}`, analyst);
    const event = items.find((e) => e.resource_id === key)!;
    expect(event).toMatchObject({ action: 'api_key_create', resource_type: 'api_key', actor_id: developer.id, signature_valid: true });
    expect(event.hmac_signature).toMatch(/^[0-9a-f]{64}$/);
    const all = await events('limit=1000');
    const bySequence = new Map(all.items.map((e) => [e.sequence, e]));
    const previous = bySequence.get(event.sequence - 1);
    if (previous) expect(event.previous_signature).toBe(previous.hmac_signature);
    expect((await events(`actor_id=${developer.id}`, admin, core.app)).items.map((e) => e.resource_id)).toContain(key);
  });

  it('paginates with page and limit', async () => {
    await auditedChange(viewer);
    await auditedChange(viewer);
    const firstPage = await events(`actor_id=${viewer.id}&limit=1&page=1`);
    const secondPage = await events(`actor_id=${viewer.id}&limit=1&page=2`);
    expect(firstPage.items).toHaveLength(1);
    expect(firstPage.total).toBeGreaterThanOrEqual(2);
    expect(secondPage.items[0].sequence).toBeLessThan(firstPage.items[0].sequence);
  });

  it('detects a changed entry and a removed seal', async () => {
    const changed = await auditedChange(viewer);
    const afterRemoved = await auditedChange(viewer);
    const find = async (entityId: string) => (await events(`actor_id=${viewer.id}&limit=1000`)).items.find((e) => e.resource_id === entityId)!;
    const before = await find(changed);
    expect(before.signature_valid).toBe(true);
    // Tampering is something the API cannot do: it is simulated in SQL.
    await t.database.exec(`UPDATE audit_logs SET details = '{"forged": true}' WHERE entity_id = '${changed}'`);
    expect((await find(changed)).signature_valid).toBe(false);
    const next = await find(afterRemoved);
    await t.database.exec(`DELETE FROM audit_log_seals WHERE sequence = ${next.sequence - 1}`);
    expect((await find(afterRemoved)).signature_valid).toBe(false);
  });

  it('refuses other roles, no token and bad queries', async () => {
    expect((await get('/api/v1/compliance/audit-events', developer)).statusCode).toBe(403);
    expect((await get('/api/v1/compliance/audit-events')).statusCode).toBe(401);
    const res = await get('/api/v1/compliance/audit-events?page=0&start_time=yesterday', admin);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(
      expect.arrayContaining([['query', 'page'], ['query', 'start_time']]),
    );
  });

  it('reports SOC 2 over 365 days and ISO 27001 over 730 days by default', async () => {
    await auditedChange(admin);
    const soc2 = await get('/api/v1/compliance/reports/soc2', analyst);
    expect(soc2.statusCode).toBe(200);
    expect(soc2.json()).toMatchObject({ framework: 'SOC2', period_days: 365 });
    expect(soc2.json().total_events).toBeGreaterThan(0);
    expect(soc2.json().controls.find((c: { control_id: string }) => c.control_id === 'CC6.1').evidence_actions).toContain('api_key_create');
    expect(soc2.json().integrity.events_checked).toBe(soc2.json().total_events);
    const iso = await get('/api/v1/compliance/reports/iso27001?period_days=30', admin);
    expect(iso.json()).toMatchObject({ framework: 'ISO27001', period_days: 30 });
    expect((await get('/api/v1/compliance/reports/iso27001', admin)).json().period_days).toBe(730);
    expect((await get('/api/v1/compliance/reports/soc2', viewer)).statusCode).toBe(403);
    expect((await get('/api/v1/compliance/reports/soc2?period_days=0', admin)).statusCode).toBe(422);
    expect((await get('/api/v1/compliance/reports/soc2')).statusCode).toBe(401);
  });

  it('exports JSON and CSV to ADMIN only', async () => {
    const key = await auditedChange(developer);
    const json = await get('/api/v1/compliance/export?format=json', admin);
    expect(json.statusCode).toBe(200);
    expect(json.json().events.map((e: Event) => e.resource_id)).toContain(key);
    expect(json.json().count).toBe(json.json().events.length);
    const csv = await get('/api/v1/compliance/export?format=csv', admin);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe(
      'sequence,id,timestamp,action,resource_type,resource_id,actor_id,actor_username,before,after,details,previous_signature,hmac_signature,signature_valid',
    );
    expect(lines.some((l) => l.includes(key))).toBe(true);
    expect((await get('/api/v1/compliance/export', analyst)).statusCode).toBe(403);
    const xml = await get('/api/v1/compliance/export?format=xml', admin);
    expect(xml.statusCode).toBe(422);
    expect(xml.json().detail[0]).toMatchObject({ loc: ['query', 'format'], type: 'enum' });
  });

  it('serves reports and export only in the full profile', async () => {
    expect((await get('/api/v1/compliance/reports/soc2', admin, core.app)).statusCode).toBe(404);
    expect((await get('/api/v1/compliance/reports/iso27001', admin, core.app)).statusCode).toBe(404);
    expect((await get('/api/v1/compliance/export', admin, core.app)).statusCode).toBe(404);
  });

  it('writes canonical JSON independent of key order', () => {
    const json = fc.jsonValue();
    fc.assert(
      fc.property(json, (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        const reordered = JSON.parse(JSON.stringify(value), (_k, v: unknown) =>
          v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
        );
        expect(canonicalJson(reordered)).toBe(text);
      }),
    );
  });
});

describe('workspaces and tool manifest', () => {
  it('lists the default workspace with every account as a member (full profile only)', async () => {
    const res = await get('/api/v1/workspaces/', viewer);
    expect(res.statusCode).toBe(200);
    const [workspace] = res.json();
    expect(workspace).toMatchObject({ name: 'Default', slug: 'default', is_default: true });
    expect(workspace.member_count).toBeGreaterThanOrEqual(4);
    await t.user();
    expect((await get('/api/v1/workspaces/', viewer)).json()[0].member_count).toBe(workspace.member_count + 1);
    expect((await get('/api/v1/workspaces/')).statusCode).toBe(401);
    expect((await get('/api/v1/workspaces/', admin, core.app)).statusCode).toBe(404);
  });

  it('describes the operations as tools without sign-in', async () => {
    const res = await get('/api/v1/mcp/manifest');
    expect(res.statusCode).toBe(200);
    const manifest = res.json();
    expect(manifest.server).toBeNull();
    const list = manifest.tools.find((tool: { name: string }) => tool.name === 'listAuditLogs');
    expect(list).toMatchObject({ http: { method: 'GET', path: '/api/v1/audit-logs/' }, authentication: 'bearer' });
    expect(list.inputSchema.properties).toHaveProperty('limit');
    const design = manifest.tools.find((tool: { name: string }) => tool.name === 'designExperimentWithAi');
    expect(design.inputSchema.required).toContain('body');
    expect(manifest.tools.some((tool: { name: string }) => tool.name === 'getMcpManifest')).toBe(false);
    const coreTools = (await get('/api/v1/mcp/manifest', undefined, core.app)).json().tools.map((tool: { name: string }) => tool.name);
    expect(coreTools).not.toContain('getSoc2Report');
  });
});
