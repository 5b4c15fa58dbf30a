import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type UpliftApp } from '../../src/app.js';
import { connectDatabase, type Database } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { eventually, directQuery, tcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { testConfig } from '../helpers/test-app.js';

/**
 * PostgreSQL restarted under load, simulated by a proxy this test owns between the app and the machine's server
 * (which is never touched): requests fail fast with 503, the app recovers without a restart, and every event it
 * acknowledged is stored. Needs TEST_DATABASE_URL.
 */
const URL_ = process.env.TEST_DATABASE_URL;

describe.runIf(Boolean(URL_))('PostgreSQL outage', () => {
  const schema = `t_fault_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let proxy: TcpProxy;
  let database: Database;
  let up: UpliftApp;
  let apiKey: string;

  const admin = (text: string) => directQuery(URL_!, text);

  beforeAll(async () => {
    await admin(`CREATE SCHEMA ${schema}`);
    const target = new URL(URL_!);
    proxy = await tcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    database = await connectDatabase({ databaseUrl: proxy.url(URL_!), searchPath: `${schema},public`, poolSize: 5 });
    await migrate(database);
    up = await buildApp(testConfig({ REDIS_URL: '' }), { database, namespace: `fault${randomUUID().slice(0, 8)}` });
    const user = await up.services.users.create(null, { username: 'pgfault', email: 'pgfault@example.com', password: 'Passw0rd!x', is_superuser: true });
    await up.services.users.setRole(user.id, 'ADMIN');
    const login = await up.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'pgfault@example.com', password: 'Passw0rd!x' } });
    const token = login.json().access_token as string;
    const key = await up.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { authorization: `Bearer ${token}` }, payload: { name: 'k', scopes: [] } });
    apiKey = key.json().key;
  });
  afterAll(async () => {
    await proxy.start();
    await up?.app.close();
    await database?.close();
    await proxy.close();
    await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  const track = (userId: string) =>
    up.app.inject({ method: 'POST', url: '/api/v1/tracking/track', headers: { 'x-api-key': apiKey }, payload: { event_type: 'fault', user_id: userId } });

  it('answers 503 fast while down, /ready follows the database, /health stays up, and no acknowledged event is lost', async () => {
    expect((await up.app.inject({ method: 'GET', url: '/ready' })).json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
    const acknowledged: string[] = [];
    const statuses = new Set<number>();
    let sent = 0;
    const load = async (rounds: number) => {
      for (let i = 0; i < rounds; i++) {
        const ids = Array.from({ length: 10 }, () => `u${sent++}`);
        const answers = await Promise.all(ids.map(track));
        answers.forEach((res, j) => {
          statuses.add(res.statusCode);
          if (res.statusCode === 200) acknowledged.push(ids[j]);
          else expect(res.statusCode, res.body).toBe(503);
        });
      }
    };
    await load(3);
    const stopping = proxy.stop();
    await load(3);
    await stopping;
    await load(3);
    const down = await up.app.inject({ method: 'GET', url: '/ready' });
    expect([down.statusCode, down.json()]).toEqual([503, { status: 'unavailable', checks: { database: 'error' } }]);
    expect((await up.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    const refused = await track('during-outage');
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(statuses.has(503)).toBe(true);

    await proxy.start();
    await eventually(async () => expect((await up.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200));
    await load(3);
    await up.services.events.drain();
    const stored = await admin(`SELECT user_id FROM ${schema}.events WHERE event_name = 'fault'`);
    const storedIds = new Set(stored.rows.map((r: { user_id: string }) => r.user_id));
    expect(acknowledged.filter((id) => !storedIds.has(id))).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(60);
  });
});
