import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_STREAMS_PER_KEY, TOO_MANY_KEY_STREAMS, TOO_MANY_STREAMS } from '../../src/modules/sdk/routes.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

/** Bounds of GET /sdk/ruleset/stream, through real sockets: streams per key and per process, and a client that does not read. */
let t: TestApp;
let dev: TestUser;
let port: number;

const BUFFER_BOUND = 64 * 1024;

beforeAll(async () => {
  t = await testApp({ env: { SDK_STREAM_MAX_CONNECTIONS: '2' }, configure: (config) => void (config.sdkStreamMaxBufferBytes = BUFFER_BOUND) });
  dev = await t.user({ role: 'DEVELOPER' });
  port = (await listen(t.app)).port;
});
afterAll(() => t.close());

const listen = async (app: FastifyInstance) => {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app.server.address() as AddressInfo;
};

interface Opened {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Promise<string>;
  close(): void;
}

/** Opens a stream and resolves with the status once the answer's head (and for a refusal, its body) arrived. */
function open(port: number, key: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/api/v1/sdk/ruleset/stream', headers: { 'x-api-key': key }, agent: false }, (res) => {
      res.setEncoding('utf8');
      let text = '';
      const body = new Promise<string>((done) => {
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => done(text));
        res.on('close', () => done(text));
      });
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body, close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}

describe('stream caps', () => {
  it(`refuses a key's stream past ${MAX_STREAMS_PER_KEY} open ones with 429, and takes it again once one closes`, async () => {
    const other = await t.spawn();
    const otherPort = (await listen(other.app)).port;
    const { key } = await t.apiKey(dev, ['sdk:ruleset']);
    const opened = await Promise.all(Array.from({ length: MAX_STREAMS_PER_KEY }, () => open(otherPort, key)));
    expect(opened.every((s) => s.status === 200)).toBe(true);

    const refused = await open(otherPort, key);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(await refused.body)).toEqual({ detail: TOO_MANY_KEY_STREAMS });
    // Another key is not held back by this one.
    const another = await open(otherPort, (await t.apiKey(dev, ['sdk:ruleset'])).key);
    expect(another.status).toBe(200);
    another.close();

    opened[0].close();
    await opened[0].body;
    let again = await open(otherPort, key);
    // The server learns of the close a moment after the client: a refusal until then.
    while (again.status === 429) {
      await again.body;
      again = await open(otherPort, key);
    }
    expect(again.status).toBe(200);
    for (const s of [...opened, again]) s.close();
  }, 60_000);

  it('refuses a stream past SDK_STREAM_MAX_CONNECTIONS on the process with 503', async () => {
    const keys = await Promise.all([1, 2, 3].map(() => t.apiKey(dev, ['sdk:ruleset'])));
    const first = await open(port, keys[0].key);
    const second = await open(port, keys[1].key);
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await open(port, keys[2].key);
    expect(third.status).toBe(503);
    expect(third.headers['retry-after']).toBe('1');
    expect(JSON.parse(await third.body)).toEqual({ detail: TOO_MANY_STREAMS });
    first.close();
    second.close();
    await Promise.all([first.body, second.body]);
  });
});

describe('a client that does not read', () => {
  it('is disconnected once its unsent buffer passes the bound, and the server lets go of it', async () => {
    const serverSockets: net.Socket[] = [];
    t.app.server.on('connection', (socket: net.Socket) => serverSockets.push(socket));
    // A ruleset of about 100 KB, so each change queues that much for the client.
    const values = Array.from({ length: 2000 }, (_, i) => `customer-${i}-${'x'.repeat(30)}`);
    const big = await t.inject({
      method: 'POST', url: '/api/v1/feature-flags', headers: dev.headers,
      payload: { key: t.unique('big'), name: 'big', is_active: true, rollout_percentage: 100,
        targeting_rules: { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'customer', operator: 'in', value: values }] }] } },
    });
    expect(big.statusCode).toBe(201);
    const toggled = await t.inject({ method: 'POST', url: '/api/v1/feature-flags', headers: dev.headers, payload: { key: t.unique('flag'), name: 'f', is_active: true, rollout_percentage: 100 } });
    const flagId = toggled.json().id as string;

    const { key } = await t.apiKey(dev, ['sdk:ruleset']);
    const client = net.connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve) => client.once('connect', () => resolve()));
    client.write(`GET /api/v1/sdk/ruleset/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\n\r\n`);
    client.pause();
    client.on('error', () => undefined);
    const server = await new Promise<net.Socket>((resolve) => {
      const find = () => serverSockets.find((s) => s.remotePort === client.localPort);
      const found = find();
      if (found) resolve(found);
      else t.app.server.once('connection', () => resolve(find()!));
    });
    let released = false;
    const closed = new Promise<void>((resolve) => server.once('close', () => resolve())).then(() => void (released = true));

    // Each change sends the whole ruleset; the kernel's buffers take a few megabytes before the server's fills.
    for (let i = 0; i < 400 && !released; i += 1) {
      const action = i % 2 === 0 ? 'deactivate' : 'activate';
      expect((await t.inject({ method: 'POST', url: `/api/v1/feature-flags/${flagId}/${action}`, headers: dev.headers })).statusCode).toBe(200);
    }
    await closed;
    expect(released).toBe(true);
    client.destroy();
  }, 180_000);
});
