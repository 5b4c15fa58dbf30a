import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpliftApp } from '../../src/app.js';
import { fixedClock } from '../../src/platform/clock.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

const clock = fixedClock(new Date('2026-05-01T09:00:00Z'));
let t: TestApp;
let admin: TestUser;
let base: string;

beforeAll(async () => {
  t = await testApp({ clock });
  admin = await t.user({ role: 'ADMIN', superuser: true });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(() => t.close());

interface Stream {
  status: number;
  /** Resolves once the first bytes (the `connected` comment) or a refusal arrived. */
  opened: Promise<void>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  data: string[];
  close(): void;
}

function open(url: string, headers: Record<string, string>): Stream {
  const stream = { status: 0, data: [] as string[] } as unknown as Stream;
  let request!: http.ClientRequest;
  let markOpened!: () => void;
  stream.opened = new Promise<void>((resolve) => (markOpened = resolve));
  stream.ended = new Promise<void>((resolve) => {
    request = http.get(url, { headers }, (res) => {
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

const streamOf = (user: TestUser, app = base) => open(`${app}/api/v1/audit-logs/stream`, user.headers);
const auditedChange = (user: TestUser) => t.apiKey(user);

describe('the audit stream ends when access ends', () => {
  it('closes when the account is demoted, deactivated or deleted', async () => {
    const demoted = await t.user({ role: 'ANALYST' });
    const deactivated = await t.user({ role: 'ANALYST' });
    const deleted = await t.user({ role: 'DEVELOPER' });
    const streams = [streamOf(demoted), streamOf(deactivated), streamOf(deleted)];
    await Promise.all(streams.map((s) => s.opened));
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);

    await t.services.users.setRole(demoted.id, 'VIEWER');
    await streams[0].ended;
    const patch = await t.inject({ method: 'PATCH', url: `/api/v1/admin/users/${deactivated.id}`, headers: admin.headers, payload: { is_active: false } });
    expect(patch.statusCode).toBe(200);
    await streams[1].ended;
    expect((await t.inject({ method: 'DELETE', url: `/api/v1/admin/users/${deleted.id}`, headers: admin.headers })).statusCode).toBe(204);
    await streams[2].ended;
  });

  it('keeps a stream whose account changed in a way that does not change its access', async () => {
    const analyst = await t.user({ role: 'ANALYST' });
    const stream = streamOf(analyst);
    await stream.opened;
    await t.services.users.setRole(analyst.id, 'ADMIN');
    const key = (await auditedChange(admin)).id;
    await new Promise<void>((resolve) => {
      const check = () => (stream.data.join('').includes(key) ? resolve() : setImmediate(check));
      check();
    });
    stream.close();
  });

  it('sends nothing past the token expiry and closes instead', async () => {
    const analyst = await t.user({ role: 'ANALYST' });
    const stream = streamOf(analyst);
    await stream.opened;
    clock.advance(61 * 60_000);
    const key = (await auditedChange(await t.user({ role: 'ADMIN' }))).id;
    await stream.ended;
    expect(stream.data.join('')).not.toContain(key);
    clock.advance(-61 * 60_000);
  });
});

describe('open streams are capped', () => {
  let capped: UpliftApp;
  let cappedBase: string;
  beforeAll(async () => {
    capped = await t.spawn({ AUDIT_STREAM_MAX_CONNECTIONS: '6' }, clock);
    await capped.app.listen({ port: 0, host: '127.0.0.1' });
    cappedBase = `http://127.0.0.1:${(capped.app.server.address() as AddressInfo).port}`;
  });

  it('at 5 per account (429) and AUDIT_STREAM_MAX_CONNECTIONS in total (503), freeing a slot on close', async () => {
    const one = await t.user({ role: 'ANALYST' });
    const other = await t.user({ role: 'ANALYST' });
    const mine = Array.from({ length: 5 }, () => streamOf(one, cappedBase));
    await Promise.all(mine.map((s) => s.opened));
    expect(mine.map((s) => s.status)).toEqual([200, 200, 200, 200, 200]);
    const sixth = streamOf(one, cappedBase);
    await sixth.ended;
    expect(sixth.status).toBe(429);

    const theirs = streamOf(other, cappedBase);
    await theirs.opened;
    expect(theirs.status).toBe(200);
    const overTotal = streamOf(other, cappedBase);
    await overTotal.ended;
    expect(overTotal.status).toBe(503);

    mine[0].close();
    let again: Stream;
    do {
      again = streamOf(one, cappedBase);
      await again.opened;
    } while (again.status !== 200);
    for (const s of [...mine, theirs, again]) s.close();
  });
});
