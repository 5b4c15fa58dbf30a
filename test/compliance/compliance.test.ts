import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/platform/canonical-json.js';
import type { UpliftApp } from '../../src/app.js';
import { auditApp, auditedChange as auditedChangeBy } from '../helpers/audit.js';
import type { TestApp, TestUser } from '../helpers/test-app.js';

let t: TestApp;
let core: UpliftApp;
let admin: TestUser;
let analyst: TestUser;
let developer: TestUser;
let viewer: TestUser;

beforeAll(async () => {
  ({ t, core, admin, analyst, developer, viewer } = await auditApp());
});
afterAll(() => t.close());

const auditedChange = (user: TestUser) => auditedChangeBy(t, user);

const get = (url: string, user?: TestUser, app = t.app) => app.inject({ method: 'GET', url, headers: user?.headers });

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
