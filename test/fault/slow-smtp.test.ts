import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpliftApp } from '../../src/app.js';
import { MAIL_TIMED_OUT } from '../../src/modules/notifications/channels.js';
import { experiment } from '../helpers/fixtures.js';
import { startStalledSmtpServer } from '../helpers/fakes.js';
import { testApp, type TestApp, type TestUser } from '../helpers/test-app.js';

/**
 * An SMTP server that accepts connections but never finishes a conversation must cost each delivery attempt no more
 * than the configured timeouts (connecting and greeting, an idle socket, the whole message): the test mail route
 * answers with the failed delivery, a background alert logs it, every connection is closed and the process stays
 * healthy. Each case's own time limit is far below the defaults (10 s, 30 s, 60 s), so it fails unless the
 * configured small values are what bound the wait.
 */

type Stalled = Awaited<ReturnType<typeof startStalledSmtpServer>>;
const servers: Record<'silent' | 'mute' | 'trickle', Stalled> = {} as never;
const apps: Record<string, UpliftApp> = {};
let t: TestApp;
let admin: TestUser;
const BOUND_MS = 8_000;

const smtpEnv = (port: number) => ({
  SMTP_HOST: '127.0.0.1',
  SMTP_PORT: String(port),
  SMTP_CONNECTION_TIMEOUT_SECONDS: '1',
  // Longer than the greeting's bound, so a server that never greets is always reported as such (with both at 1 s the
  // idle-socket timer could fire first on a busy machine).
  SMTP_SOCKET_TIMEOUT_SECONDS: '2',
  SMTP_SEND_TIMEOUT_SECONDS: '3',
  NOTIFICATION_MAX_ATTEMPTS: '1',
  NOTIFICATION_RETRY_BASE_MS: '0',
});

beforeAll(async () => {
  for (const mode of ['silent', 'mute', 'trickle'] as const) servers[mode] = await startStalledSmtpServer(mode);
  t = await testApp({ env: smtpEnv(servers.silent.port) });
  apps.silent = t.main;
  apps.mute = await t.spawn(smtpEnv(servers.mute.port));
  apps.trickle = await t.spawn(smtpEnv(servers.trickle.port));
  admin = await t.user({ role: 'ADMIN' });
  const prefs = await t.inject({
    method: 'PUT', url: '/api/v1/notifications/preferences', headers: admin.headers,
    payload: { email_enabled: true, events: ['experiment_started'] },
  });
  expect(prefs.statusCode).toBe(200);
});
afterAll(async () => {
  await t.close();
  for (const server of Object.values(servers)) await server.close();
});

describe('a stalled SMTP server', () => {
  it.each([
    ['never greets', 'silent', 'Greeting never received'],
    ['greets, then never answers', 'mute', 'Timeout'],
    ['answers a byte at a time, never finishing', 'trickle', 'the message took longer than SMTP_SEND_TIMEOUT_SECONDS'],
  ] as const)('%s: the test mail fails within the configured timeout', async (_label, mode, reason) => {
    const server = servers[mode];
    const before = server.accepted();
    const res = await apps[mode].app.inject({ method: 'POST', url: '/api/v1/notifications/test?channel=email', headers: admin.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([
      expect.objectContaining({ channel: 'email', target: admin.email, status: 'failed', attempts: 1, error: `${MAIL_TIMED_OUT} (${reason})` }),
    ]);
    expect(server.accepted()).toBe(before + 1);
    await server.idle();
    expect((await apps[mode].app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  }, BOUND_MS);

  it('a background alert records the failed delivery and leaves no connection open', async () => {
    const draft = await experiment(t, admin, { start: false });
    const started = await t.inject({ method: 'POST', url: `/api/v1/experiments/${draft.id}/start`, headers: admin.headers });
    expect(started.statusCode).toBe(200);
    await t.services.notifications.drain();
    const log = await t.inject({
      method: 'GET', url: `/api/v1/notifications/delivery-log?kind=experiment_started&user_id=${admin.id}`, headers: admin.headers,
    });
    expect(log.json().items).toEqual([
      expect.objectContaining({ channel: 'email', status: 'failed', attempt: 1, error: `${MAIL_TIMED_OUT} (Greeting never received)` }),
    ]);
    await servers.silent.idle();
    expect((await t.inject({ method: 'GET', url: '/api/v1/experiments/' + draft.id, headers: admin.headers })).json().status).toBe('active');
  }, BOUND_MS);
});
