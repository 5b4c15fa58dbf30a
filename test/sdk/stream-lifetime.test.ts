import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

/** GET /sdk/ruleset/stream stays open only while its key would still be accepted (real sockets). */
const clock = fixedClock(new Date('2026-06-01T09:00:00Z'));
let t: TestApp;
let admin: TestUser;
let base: string;

const listen = async (app: FastifyInstance) => {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  t = await testApp({ clock, env: { SDK_STREAM_HEARTBEAT_SECONDS: '1' } });
  admin = await t.user({ role: 'ADMIN', superuser: true });
  base = await listen(t.app);
});
afterAll(() => t.close());

interface Stream {
  status: number;
  /** Resolves once the first bytes arrived. */
  opened: Promise<void>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  data: string[];
  close(): void;
}

function open(url: string, key: string): Stream {
  const stream = { status: 0, data: [] as string[] } as unknown as Stream;
  let request!: http.ClientRequest;
  let markOpened!: () => void;
  stream.opened = new Promise<void>((resolve) => (markOpened = resolve));
  stream.ended = new Promise<void>((resolve) => {
    request = http.get(`${url}/api/v1/sdk/ruleset/stream`, { headers: { 'x-api-key': key } }, (res) => {
      stream.status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        stream.data.push(chunk);
        markOpened();
      });
      res.on('end', () => {
        markOpened();
        resolve();
      });
      res.on('error', () => resolve());
    });
    request.on('error', () => resolve());
  });
  stream.close = () => request.destroy();
  return stream;
}

const sdkKey = async (owner: TestUser, extra: Record<string, unknown> = {}) => {
  const res = await t.inject({ method: 'POST', url: '/api/v1/api-keys', headers: owner.headers, payload: { name: 'sdk', scopes: ['sdk:ruleset'], ...extra } });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; key: string };
};
const download = (key: string) => t.inject({ method: 'GET', url: '/api/v1/sdk/ruleset', headers: { 'x-api-key': key } });

describe('the SDK ruleset stream ends when its key stops being accepted', () => {
  it('closes when the key is deleted', async () => {
    const dev = await t.user({ role: 'DEVELOPER' });
    const { id, key } = await sdkKey(dev);
    const stream = open(base, key);
    await stream.opened;
    expect(stream.status).toBe(200);
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, headers: dev.headers })).statusCode).toBe(204);
    await stream.ended;
    expect((await download(key)).statusCode).toBe(401);
  });

  it("closes when the key's owner is deactivated or deleted", async () => {
    const [deactivated, deleted] = await t.users('DEVELOPER', 'VIEWER');
    const streams = [open(base, (await sdkKey(deactivated)).key), open(base, (await sdkKey(deleted)).key)];
    await Promise.all(streams.map((s) => s.opened));
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    const patch = await t.inject({ method: 'PATCH', url: `/api/v1/admin/users/${deactivated.id}`, headers: admin.headers, payload: { is_active: false } });
    expect(patch.statusCode).toBe(200);
    await streams[0].ended;
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/admin/users/${deleted.id}`, headers: admin.headers })).statusCode).toBe(204);
    await streams[1].ended;
  });

  it('closes at the key’s expiry, and the key is refused from then on', async () => {
    const dev = await t.user({ role: 'DEVELOPER' });
    const { key } = await sdkKey(dev, { expires_at: new Date(clock.now().getTime() + 3_600_000).toISOString() });
    const stream = open(base, key);
    await stream.opened;
    expect(stream.status).toBe(200);
    clock.advance(2 * 3_600_000);
    await stream.ended;
    expect((await download(key)).statusCode).toBe(401);
  });

  it.runIf(process.env.TEST_REDIS_URL || process.env.TEST_DATABASE_URL)('closes on another API process when the key is deleted on this one', async () => {
    const other = await listen((await t.spawn({ SDK_STREAM_HEARTBEAT_SECONDS: '1' }, clock)).app);
    const dev = await t.user({ role: 'DEVELOPER' });
    const { id, key } = await sdkKey(dev);
    const stream = open(other, key);
    await stream.opened;
    expect(stream.status).toBe(200);
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, headers: dev.headers })).statusCode).toBe(204);
    await stream.ended;
  });
});
